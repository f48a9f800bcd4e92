// Run-time choice of the vector paths (avx512.h, avx2.h): what the CPU and OS support, and what
// the environment turns off.
#include <cstdlib>
#include <cstring>

#include "half_convert.h"
#include "simd/avx2.h"
#include "simd/avx512.h"

namespace opreg::kernels::cpu {
namespace {

// Whether the environment variable `name` is set to anything but "" or "0".
[[maybe_unused]] bool TurnedOff(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

// libgcc's checks include the OS's XSAVE support for the vector state; CpuHasF16c checks AVX2
// (and so the ymm state) too.
bool DetectAvx512() {
#if OPREG_CPU_HAVE_AVX512
  return !TurnedOff("OPREG_CPU_NO_AVX512") && detail::CpuHasF16c() &&
         __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

bool DetectAvx2() {
#if OPREG_CPU_HAVE_AVX2
  return !TurnedOff("OPREG_CPU_NO_AVX2") && detail::CpuHasF16c() && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("bmi2");
#else
  return false;
#endif
}

}  // namespace

bool avx512::Supported() {
  static const bool supported = DetectAvx512();
  return supported;
}

bool avx512::HasBFloat16Instructions() {
#if OPREG_CPU_HAVE_AVX512
  static const bool has = Supported() && __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

bool avx2::Supported() {
  static const bool supported = DetectAvx2();
  return supported;
}

}  // namespace opreg::kernels::cpu
