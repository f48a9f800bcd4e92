// opreg::torch_compat: libtorch's at::cpu queries (ATen/cpu/Utils.h) over the CPUID instruction
// and the operating system, for kernels that pick a code path or a block size by the machine
// they run on (vLLM's CPU backend sizes its tiles by "l2_cache_size").
//
// Errors: none; a quantity the system does not report is 0, an instruction set it does not
// report is false. Thread safety: every function may be called from any thread.
#pragma once

#include <string>
#include <unordered_map>

#include "opreg/core/ivalue.h"

namespace c10 {
using IValue = ::opreg::IValue;
}  // namespace c10

namespace at::cpu {

// What torch.backends.cpu / torch._C._cpu._get_cpu_capability() report, under torch's keys:
// instruction sets as bools ("avx2", "avx512_f", "avx512_bf16", "amx_tile", ... ; true only
// when the CPU has them and the OS saves their registers), "l1d_cache_size" and
// "l2_cache_size" in bytes, "num_logical_cores", "num_physical_cores", "num_sockets" as ints,
// "architecture" and "cpu_name" as strings. Computed once; each call returns a copy.
std::unordered_map<std::string, c10::IValue> get_cpu_capabilities();

// The CPU has AVX512-VNNI and the OS saves AVX-512 state.
bool is_avx512_vnni_supported();

// Asks Linux for permission to use AMX tile data in this process (needed before the first
// AMX instruction); false when the CPU has no AMX tiles or the kernel refuses.
bool init_amx();

}  // namespace at::cpu
