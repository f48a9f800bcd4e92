// Private: element-wise dtype conversion shared by copy_, fill and element access.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "opreg/core/half.h"

namespace opreg::internal {

template <class T>
inline constexpr bool kIsReducedFloat =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Float8E4M3FN> ||
    std::is_same_v<T, Float8E5M2>;

// float/double -> integer without undefined behaviour: truncates toward zero, saturates at the
// type's range, NaN -> 0. (PyTorch leaves these cases undefined; opreg picks a defined answer.)
template <class To, class From>
To SaturatingFloatToInt(From v) {
  static_assert(std::is_integral_v<To> && std::is_floating_point_v<From>);
  if (std::isnan(v)) return 0;
  constexpr double kLow = static_cast<double>(std::numeric_limits<To>::min());
  // 2^(bits) for unsigned, 2^(bits-1) for signed: exact in double, one past the maximum.
  constexpr double kHigh =
      std::is_signed_v<To> ? -kLow
                           : 2.0 * (static_cast<double>(std::numeric_limits<To>::max() / 2) + 1.0);
  const double d = static_cast<double>(v);
  if (d <= kLow) return std::numeric_limits<To>::min();
  if (d >= kHigh) return std::numeric_limits<To>::max();
  return static_cast<To>(d);
}

// Converts one element between any two tensor element types (see Tensor::copy_ for the rules).
template <class To, class From>
To ConvertElement(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsReducedFloat<From>) {
    return ConvertElement<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (kIsReducedFloat<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return SaturatingFloatToInt<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace opreg::internal
