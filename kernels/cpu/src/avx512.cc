#include "avx512.h"

#include <cstdlib>
#include <cstring>

#if OPREG_CPU_HAVE_AVX512
#include <cpuid.h>
#endif

namespace opreg::kernels::cpu::avx512 {
namespace {

bool Detect() {
#if OPREG_CPU_HAVE_AVX512
  const char* off = std::getenv("OPREG_CPU_NO_AVX512");
  if (off != nullptr && off[0] != '\0' && std::strcmp(off, "0") != 0) return false;
  __builtin_cpu_init();  // Idempotent; needed if this runs before libgcc's own initializer.
  // libgcc's checks include the OS's XSAVE support for the vector state. F16C is not among the
  // names every GCC knows: CPUID leaf 1, ECX bit 29.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  return f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
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
