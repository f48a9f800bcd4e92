// libtorch's arithmetic on c10::Half and c10::BFloat16 (c10/util/Half-inl.h): Half op Half is a
// Half (computed in float, rounded once), Half op float a float, Half op double a double, Half
// op int a Half; compound assignments; unary minus. Without these, `h1 + h2` would be a float
// through the implicit conversion and `h += x` would not compile.
//
// The operators live in namespace opreg (the types' namespace, so argument-dependent lookup
// finds them) but only translation units that include torch_compat see them: opreg's own code
// keeps computing in float explicitly.
#pragma once

#include <cstdint>

#include "opreg/core/half.h"
#include "opreg/torch_compat/macros.h"

namespace opreg {

#define OPREG_TORCH_COMPAT_ARITHMETIC_(T)                                                       \
  C10_HOST_DEVICE inline T operator+(const T& a, const T& b) {                                  \
    return T(static_cast<float>(a) + static_cast<float>(b));                                    \
  }                                                                                             \
  C10_HOST_DEVICE inline T operator-(const T& a, const T& b) {                                  \
    return T(static_cast<float>(a) - static_cast<float>(b));                                    \
  }                                                                                             \
  C10_HOST_DEVICE inline T operator*(const T& a, const T& b) {                                  \
    return T(static_cast<float>(a) * static_cast<float>(b));                                    \
  }                                                                                             \
  C10_HOST_DEVICE inline T operator/(const T& a, const T& b) {                                  \
    return T(static_cast<float>(a) / static_cast<float>(b));                                    \
  }                                                                                             \
  C10_HOST_DEVICE inline T operator-(const T& a) { return T(-static_cast<float>(a)); }          \
  C10_HOST_DEVICE inline T& operator+=(T& a, const T& b) { return a = a + b; }                  \
  C10_HOST_DEVICE inline T& operator-=(T& a, const T& b) { return a = a - b; }                  \
  C10_HOST_DEVICE inline T& operator*=(T& a, const T& b) { return a = a * b; }                  \
  C10_HOST_DEVICE inline T& operator/=(T& a, const T& b) { return a = a / b; }                  \
  C10_HOST_DEVICE inline float operator+(T a, float b) { return static_cast<float>(a) + b; }    \
  C10_HOST_DEVICE inline float operator-(T a, float b) { return static_cast<float>(a) - b; }    \
  C10_HOST_DEVICE inline float operator*(T a, float b) { return static_cast<float>(a) * b; }    \
  C10_HOST_DEVICE inline float operator/(T a, float b) { return static_cast<float>(a) / b; }    \
  C10_HOST_DEVICE inline float operator+(float a, T b) { return a + static_cast<float>(b); }    \
  C10_HOST_DEVICE inline float operator-(float a, T b) { return a - static_cast<float>(b); }    \
  C10_HOST_DEVICE inline float operator*(float a, T b) { return a * static_cast<float>(b); }    \
  C10_HOST_DEVICE inline float operator/(float a, T b) { return a / static_cast<float>(b); }    \
  C10_HOST_DEVICE inline double operator+(T a, double b) { return static_cast<double>(a) + b; } \
  C10_HOST_DEVICE inline double operator-(T a, double b) { return static_cast<double>(a) - b; } \
  C10_HOST_DEVICE inline double operator*(T a, double b) { return static_cast<double>(a) * b; } \
  C10_HOST_DEVICE inline double operator/(T a, double b) { return static_cast<double>(a) / b; } \
  C10_HOST_DEVICE inline double operator+(double a, T b) { return a + static_cast<double>(b); } \
  C10_HOST_DEVICE inline double operator-(double a, T b) { return a - static_cast<double>(b); } \
  C10_HOST_DEVICE inline double operator*(double a, T b) { return a * static_cast<double>(b); } \
  C10_HOST_DEVICE inline double operator/(double a, T b) { return a / static_cast<double>(b); } \
  C10_HOST_DEVICE inline T operator+(T a, int b) { return a + T(static_cast<float>(b)); }       \
  C10_HOST_DEVICE inline T operator-(T a, int b) { return a - T(static_cast<float>(b)); }       \
  C10_HOST_DEVICE inline T operator*(T a, int b) { return a * T(static_cast<float>(b)); }       \
  C10_HOST_DEVICE inline T operator/(T a, int b) { return a / T(static_cast<float>(b)); }       \
  C10_HOST_DEVICE inline T operator+(int a, T b) { return T(static_cast<float>(a)) + b; }       \
  C10_HOST_DEVICE inline T operator-(int a, T b) { return T(static_cast<float>(a)) - b; }       \
  C10_HOST_DEVICE inline T operator*(int a, T b) { return T(static_cast<float>(a)) * b; }       \
  C10_HOST_DEVICE inline T operator/(int a, T b) { return T(static_cast<float>(a)) / b; }       \
  C10_HOST_DEVICE inline T operator+(T a, int64_t b) { return a + T(static_cast<float>(b)); }   \
  C10_HOST_DEVICE inline T operator-(T a, int64_t b) { return a - T(static_cast<float>(b)); }   \
  C10_HOST_DEVICE inline T operator*(T a, int64_t b) { return a * T(static_cast<float>(b)); }   \
  C10_HOST_DEVICE inline T operator/(T a, int64_t b) { return a / T(static_cast<float>(b)); }   \
  C10_HOST_DEVICE inline T operator+(int64_t a, T b) { return T(static_cast<float>(a)) + b; }   \
  C10_HOST_DEVICE inline T operator-(int64_t a, T b) { return T(static_cast<float>(a)) - b; }   \
  C10_HOST_DEVICE inline T operator*(int64_t a, T b) { return T(static_cast<float>(a)) * b; }   \
  C10_HOST_DEVICE inline T operator/(int64_t a, T b) { return T(static_cast<float>(a)) / b; }

OPREG_TORCH_COMPAT_ARITHMETIC_(Half)
OPREG_TORCH_COMPAT_ARITHMETIC_(BFloat16)
#undef OPREG_TORCH_COMPAT_ARITHMETIC_

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
namespace c10 {
using ::opreg::__ldg;
}  // namespace c10
#endif
