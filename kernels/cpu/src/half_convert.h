// Internal: bulk f16 <-> f32 conversion for the kernels' f16 paths.
//
// Half's own conversions (core/half.h) are branch-free and vectorize, but in software they cost
// a dozen vector instructions per direction, several times the memory time of a memory-bound
// op. These use the CPU's F16C instructions where it has them (chosen once, at load time), with
// the results of Half::FromFloat / Half's float conversion bit for bit, NaNs included; f16 row
// kernels convert a block of a row at a time into an f32 stack buffer and compute in f32.
#pragma once

#include <cstdint>

#include "opreg/core/half.h"

namespace opreg::kernels::cpu::detail {

// Elements per f16 block: small enough for a few f32 stack buffers to stay in L1.
inline constexpr int64_t kHalfBlock = 512;

// Row kernels that read a 16-bit row more than once convert rows up to this length whole into
// an f32 stack buffer (32 KiB), so each element is converted once; longer rows go by blocks.
inline constexpr int64_t kRowBuffer = 8192;

// Whether the CPU has F16C and AVX2 (with the OS saving ymm state); false off x86-64 / GCC-style
// compilers. Thread-safe.
bool CpuHasF16c();

// out[i] = float(in[i]) for i < n.
void HalfToFloat(const Half* in, float* out, int64_t n);

// out[i] = Half(in[i]) (round to nearest even) for i < n.
void FloatToHalf(const float* in, Half* out, int64_t n);

}  // namespace opreg::kernels::cpu::detail
