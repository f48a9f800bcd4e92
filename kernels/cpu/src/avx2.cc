#include "avx2.h"

#include <cstdlib>
#include <cstring>

#include "half_convert.h"

namespace opreg::kernels::cpu::avx2 {
namespace {

bool Detect() {
#if OPREG_CPU_HAVE_AVX2
  const char* off = std::getenv("OPREG_CPU_NO_AVX2");
  if (off != nullptr && off[0] != '\0' && std::strcmp(off, "0") != 0) return false;
  // CpuHasF16c checks AVX2 too, with the OS's support for the ymm state.
  return detail::CpuHasF16c() && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#else
  return false;
#endif
}

}  // namespace

bool Supported() {
  static const bool supported = Detect();
  return supported;
}

}  // namespace opreg::kernels::cpu::avx2
