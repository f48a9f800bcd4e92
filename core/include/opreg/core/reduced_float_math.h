// The <cmath> functions of the 16-bit floating types (opreg::Half, opreg::BFloat16), as torch
// declares them (torch/headeronly/util/BFloat16-math.h): std::exp(h), std::sqrt(h), ... compute
// in float and return the 16-bit type, rounding there. Kernel code written for torch relies on
// that rounding (std::exp(-b) of a BFloat16 is a BFloat16), so getting float back instead would
// change results in the last bit; these overloads make the same code give torch's bits.
//
// Like torch's, they are templates declared in namespace std, chosen over the float overloads
// only for Half and BFloat16 arguments. Header-only; host and device code. Errors: none.
// Thread safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "opreg/core/half.h"

namespace opreg {

template <typename T>
struct is_reduced_floating_point
    : std::integral_constant<bool, std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>> {};
template <typename T>
constexpr bool is_reduced_floating_point_v = is_reduced_floating_point<T>::value;

}  // namespace opreg

// The names torch's header gives them (this header is included only by the torch-facing
// headers of opreg::torch_compat and opreg::torch_stable, whose c10 names alias opreg's).
namespace c10 {
using ::opreg::is_reduced_floating_point;
using ::opreg::is_reduced_floating_point_v;
}  // namespace c10
namespace torch::headeronly {
using ::opreg::is_reduced_floating_point;
using ::opreg::is_reduced_floating_point_v;
}  // namespace torch::headeronly

// NOLINTBEGIN(cert-dcl58-cpp): torch adds these to std; code calls them as std::exp(h).
namespace std {

using ::opreg::is_reduced_floating_point;
using ::opreg::is_reduced_floating_point_v;

#define OPREG_REDUCED_FLOAT_UNARY_(name)                                                    \
  template <typename T, std::enable_if_t<::opreg::is_reduced_floating_point_v<T>, int> = 0> \
  inline T name(T a) {                                                                      \
    return std::name(static_cast<float>(a));                                                \
  }
OPREG_REDUCED_FLOAT_UNARY_(acos)
OPREG_REDUCED_FLOAT_UNARY_(asin)
OPREG_REDUCED_FLOAT_UNARY_(atan)
OPREG_REDUCED_FLOAT_UNARY_(atanh)
OPREG_REDUCED_FLOAT_UNARY_(erf)
OPREG_REDUCED_FLOAT_UNARY_(erfc)
OPREG_REDUCED_FLOAT_UNARY_(exp)
OPREG_REDUCED_FLOAT_UNARY_(expm1)
OPREG_REDUCED_FLOAT_UNARY_(log)
OPREG_REDUCED_FLOAT_UNARY_(log10)
OPREG_REDUCED_FLOAT_UNARY_(log1p)
OPREG_REDUCED_FLOAT_UNARY_(log2)
OPREG_REDUCED_FLOAT_UNARY_(ceil)
OPREG_REDUCED_FLOAT_UNARY_(cos)
OPREG_REDUCED_FLOAT_UNARY_(floor)
OPREG_REDUCED_FLOAT_UNARY_(nearbyint)
OPREG_REDUCED_FLOAT_UNARY_(sin)
OPREG_REDUCED_FLOAT_UNARY_(tan)
OPREG_REDUCED_FLOAT_UNARY_(sinh)
OPREG_REDUCED_FLOAT_UNARY_(cosh)
OPREG_REDUCED_FLOAT_UNARY_(tanh)
OPREG_REDUCED_FLOAT_UNARY_(trunc)
OPREG_REDUCED_FLOAT_UNARY_(lgamma)
OPREG_REDUCED_FLOAT_UNARY_(sqrt)
OPREG_REDUCED_FLOAT_UNARY_(abs)
#undef OPREG_REDUCED_FLOAT_UNARY_

template <typename T, std::enable_if_t<::opreg::is_reduced_floating_point_v<T>, int> = 0>
inline bool isfinite(T a) {
  return std::isfinite(static_cast<float>(a));
}
template <typename T, std::enable_if_t<::opreg::is_reduced_floating_point_v<T>, int> = 0>
inline T rsqrt(T a) {
  return 1.0f / std::sqrt(static_cast<float>(a));
}
template <typename T, std::enable_if_t<::opreg::is_reduced_floating_point_v<T>, int> = 0>
inline T pow(T a, double b) {
  return std::pow(static_cast<float>(a), b);
}
template <typename T, std::enable_if_t<::opreg::is_reduced_floating_point_v<T>, int> = 0>
inline T pow(T a, T b) {
  return std::pow(static_cast<float>(a), static_cast<float>(b));
}
template <typename T, std::enable_if_t<::opreg::is_reduced_floating_point_v<T>, int> = 0>
inline T fmod(T a, T b) {
  return std::fmod(static_cast<float>(a), static_cast<float>(b));
}

// The next representable 16-bit value after `from` towards `to` (a step of the bit pattern).
template <typename T, std::enable_if_t<::opreg::is_reduced_floating_point_v<T>, int> = 0>
inline T nextafter(T from, T to) {
  const float f = static_cast<float>(from), t = static_cast<float>(to);
  if (f != f || t != t) return static_cast<T>(f + t);
  uint16_t a, b;
  std::memcpy(&a, &from, 2);
  std::memcpy(&b, &to, 2);
  if (f == t) return to;
  constexpr uint16_t kSign = 0x8000;
  if ((a & ~kSign) == 0) {  // +-0: the smallest subnormal with to's sign
    a = static_cast<uint16_t>((b & kSign) | 1);
  } else if ((f < t) == ((a & kSign) == 0)) {
    ++a;  // away from zero
  } else {
    --a;  // towards zero
  }
  T out;
  std::memcpy(&out, &a, 2);
  return out;
}

}  // namespace std
// NOLINTEND(cert-dcl58-cpp)
