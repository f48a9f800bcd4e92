#include "avx512.h"

#include <cstdlib>
#include <cstring>

#include "half_convert.h"

namespace opreg::kernels::cpu::avx512 {
namespace {

bool Detect() {
#if OPREG_CPU_HAVE_AVX512
  const char* off = std::getenv("OPREG_CPU_NO_AVX512");
  if (off != nullptr && off[0] != '\0' && std::strcmp(off, "0") != 0) return false;
  // libgcc's checks include the OS's XSAVE support for the vector state.
  return detail::CpuHasF16c() && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

}  // namespace

bool Supported() {
  static const bool supported = Detect();
  return supported;
}

bool HasBFloat16Instructions() {
#if OPREG_CPU_HAVE_AVX512
  static const bool has = Supported() && __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

}  // namespace opreg::kernels::cpu::avx512
