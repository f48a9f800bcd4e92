// libtorch's arithmetic on 16-bit floats (c10/util/Half-inl.h), for opreg::Half and
// opreg::BFloat16: Half op Half is a Half (computed in float, rounded once), Half op float a
// float, Half op double a double, Half op int a Half; compound assignments; unary minus; and, in
// CUDA code, __ldg overloads. Kernel code written for c10::Half relies on these (`h += x`,
// `__ldg(half_ptr)`), so both compatibility layers include this header (opreg::torch_compat's
// c10::Half and opreg::torch_stable's are opreg::Half).
//
// The operators live in namespace opreg (the types' namespace, so argument-dependent lookup finds
// them), but only translation units that include this header see them: opreg's own code keeps
// computing in float explicitly. Header-only, host and device.
#pragma once

#include <cstdint>

#include "opreg/core/half.h"
#include "opreg/core/macros.h"

namespace opreg {

#define OPREG_HALF_ARITHMETIC_(T)                                                                 \
  OPREG_HOST_DEVICE inline T operator+(const T& a, const T& b) {                                  \
    return T(static_cast<float>(a) + static_cast<float>(b));                                      \
  }                                                                                               \
  OPREG_HOST_DEVICE inline T operator-(const T& a, const T& b) {                                  \
    return T(static_cast<float>(a) - static_cast<float>(b));                                      \
  }                                                                                               \
  OPREG_HOST_DEVICE inline T operator*(const T& a, const T& b) {                                  \
    return T(static_cast<float>(a) * static_cast<float>(b));                                      \
  }                                                                                               \
  OPREG_HOST_DEVICE inline T operator/(const T& a, const T& b) {                                  \
    return T(static_cast<float>(a) / static_cast<float>(b));                                      \
  }                                                                                               \
  OPREG_HOST_DEVICE inline T operator-(const T& a) { return T(-static_cast<float>(a)); }          \
  OPREG_HOST_DEVICE inline T& operator+=(T& a, const T& b) { return a = a + b; }                  \
  OPREG_HOST_DEVICE inline T& operator-=(T& a, const T& b) { return a = a - b; }                  \
  OPREG_HOST_DEVICE inline T& operator*=(T& a, const T& b) { return a = a * b; }                  \
  OPREG_HOST_DEVICE inline T& operator/=(T& a, const T& b) { return a = a / b; }                  \
  OPREG_HOST_DEVICE inline float operator+(T a, float b) { return static_cast<float>(a) + b; }    \
  OPREG_HOST_DEVICE inline float operator-(T a, float b) { return static_cast<float>(a) - b; }    \
  OPREG_HOST_DEVICE inline float operator*(T a, float b) { return static_cast<float>(a) * b; }    \
  OPREG_HOST_DEVICE inline float operator/(T a, float b) { return static_cast<float>(a) / b; }    \
  OPREG_HOST_DEVICE inline float operator+(float a, T b) { return a + static_cast<float>(b); }    \
  OPREG_HOST_DEVICE inline float operator-(float a, T b) { return a - static_cast<float>(b); }    \
  OPREG_HOST_DEVICE inline float operator*(float a, T b) { return a * static_cast<float>(b); }    \
  OPREG_HOST_DEVICE inline float operator/(float a, T b) { return a / static_cast<float>(b); }    \
  OPREG_HOST_DEVICE inline double operator+(T a, double b) { return static_cast<double>(a) + b; } \
  OPREG_HOST_DEVICE inline double operator-(T a, double b) { return static_cast<double>(a) - b; } \
  OPREG_HOST_DEVICE inline double operator*(T a, double b) { return static_cast<double>(a) * b; } \
  OPREG_HOST_DEVICE inline double operator/(T a, double b) { return static_cast<double>(a) / b; } \
  OPREG_HOST_DEVICE inline double operator+(double a, T b) { return a + static_cast<double>(b); } \
  OPREG_HOST_DEVICE inline double operator-(double a, T b) { return a - static_cast<double>(b); } \
  OPREG_HOST_DEVICE inline double operator*(double a, T b) { return a * static_cast<double>(b); } \
  OPREG_HOST_DEVICE inline double operator/(double a, T b) { return a / static_cast<double>(b); } \
  OPREG_HOST_DEVICE inline T operator+(T a, int b) { return a + T(static_cast<float>(b)); }       \
  OPREG_HOST_DEVICE inline T operator-(T a, int b) { return a - T(static_cast<float>(b)); }       \
  OPREG_HOST_DEVICE inline T operator*(T a, int b) { return a * T(static_cast<float>(b)); }       \
  OPREG_HOST_DEVICE inline T operator/(T a, int b) { return a / T(static_cast<float>(b)); }       \
  OPREG_HOST_DEVICE inline T operator+(int a, T b) { return T(static_cast<float>(a)) + b; }       \
  OPREG_HOST_DEVICE inline T operator-(int a, T b) { return T(static_cast<float>(a)) - b; }       \
  OPREG_HOST_DEVICE inline T operator*(int a, T b) { return T(static_cast<float>(a)) * b; }       \
  OPREG_HOST_DEVICE inline T operator/(int a, T b) { return T(static_cast<float>(a)) / b; }       \
  OPREG_HOST_DEVICE inline T operator+(T a, int64_t b) { return a + T(static_cast<float>(b)); }   \
  OPREG_HOST_DEVICE inline T operator-(T a, int64_t b) { return a - T(static_cast<float>(b)); }   \
  OPREG_HOST_DEVICE inline T operator*(T a, int64_t b) { return a * T(static_cast<float>(b)); }   \
  OPREG_HOST_DEVICE inline T operator/(T a, int64_t b) { return a / T(static_cast<float>(b)); }   \
  OPREG_HOST_DEVICE inline T operator+(int64_t a, T b) { return T(static_cast<float>(a)) + b; }   \
  OPREG_HOST_DEVICE inline T operator-(int64_t a, T b) { return T(static_cast<float>(a)) - b; }   \
  OPREG_HOST_DEVICE inline T operator*(int64_t a, T b) { return T(static_cast<float>(a)) * b; }   \
  OPREG_HOST_DEVICE inline T operator/(int64_t a, T b) { return T(static_cast<float>(a)) / b; }

OPREG_HALF_ARITHMETIC_(Half)
OPREG_HALF_ARITHMETIC_(BFloat16)
#undef OPREG_HALF_ARITHMETIC_

#if defined(__CUDACC__)
// c10's read-only-cache loads of 16-bit floats (Half-inl.h, BFloat16-inl.h), found by
// argument-dependent lookup from kernels calling __ldg(ptr).
__device__ inline Half __ldg(const Half* ptr) {
  return Half(::__ldg(reinterpret_cast<const unsigned short*>(ptr)), kFromBits);
}
__device__ inline BFloat16 __ldg(const BFloat16* ptr) {
  return BFloat16(::__ldg(reinterpret_cast<const unsigned short*>(ptr)), kFromBits);
}
#endif

}  // namespace opreg

#if defined(__CUDACC__)
// Found by unqualified calls from c10 code, as torch's c10::__ldg overloads are.
namespace c10 {
using ::opreg::__ldg;
}  // namespace c10
#endif
