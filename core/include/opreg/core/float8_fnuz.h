// opreg::Float8E4M3FNUZ and opreg::Float8E5M2FNUZ: the FP8 formats without negative zero and
// infinities (NaN is 0x80) that AMD GPUs use. opreg tensors have no such dtype; these types exist
// so that kernel code naming them (c10::Float8_e4m3fnuz through opreg::torch_compat and
// opreg::torch_stable) compiles, and converts to and from float correctly where they are used as
// values. Header-only, usable in device code.
//
// Conversion from float rounds to nearest even and saturates to the largest finite value
// (e4m3fnuz 240, e5m2fnuz 57344); NaN becomes 0x80; values that round to zero are +0.
#pragma once

#include <cmath>
#include <cstdint>

#include "opreg/core/half.h"
#include "opreg/core/macros.h"

namespace opreg {
namespace detail {

OPREG_HOST_DEVICE inline float FnuzToFloat(uint8_t bits, int mbits, int bias) {
  if (bits == 0x80) return detail::BitsToFloat(0x7fc00000u);  // NaN
  const int e = (bits & 0x7f) >> mbits;
  const int m = bits & ((1 << mbits) - 1);
  const float magnitude = e == 0 ? ldexpf(static_cast<float>(m), 1 - bias - mbits)
                                 : ldexpf(static_cast<float>((1 << mbits) + m), e - bias - mbits);
  return (bits & 0x80) ? -magnitude : magnitude;
}

OPREG_HOST_DEVICE inline uint8_t FloatToFnuz(float f, int mbits, int bias) {
  const uint32_t u = detail::FloatToBits(f);
  if (detail::FloatBitsIsNaN(u)) return 0x80;
  const uint8_t sign = (u >> 24) & 0x80;
  const float a = detail::BitsToFloat(u & 0x7fffffffu);
  int exponent = 0;
  frexpf(a, &exponent);  // a = fraction * 2^exponent, fraction in [0.5, 1)
  int biased = exponent - 1 + bias;
  uint32_t bits;
  if (a == 0.0f || biased <= 0) {
    // Subnormal range (or zero): multiples of 2^(1 - bias - mbits); a carry makes it normal.
    bits = static_cast<uint32_t>(nearbyintf(ldexpf(a, bias - 1 + mbits)));
  } else {
    uint32_t q = static_cast<uint32_t>(nearbyintf(ldexpf(a, mbits - (exponent - 1))));
    if (q == (2u << mbits)) {
      q >>= 1;
      ++biased;
    }
    bits = (static_cast<uint32_t>(biased) << mbits) | (q - (1u << mbits));
  }
  if (bits > 0x7f || (u & 0x7fffffffu) == 0x7f800000u) bits = 0x7f;  // saturate (inf too)
  return bits == 0 ? 0 : static_cast<uint8_t>(sign | bits);
}

}  // namespace detail

namespace detail {

// One fnuz format: kMantissaBits mantissa bits, exponent bias kBias.
template <int kMantissaBits, int kBias>
struct Float8Fnuz {
  uint8_t x;  // trivially default-constructible, as opreg/core/half.h's types
  using from_bits_t = FromBitsTag;
  OPREG_HOST_DEVICE static constexpr from_bits_t from_bits() { return from_bits_t(); }
  Float8Fnuz() = default;
  OPREG_HOST_DEVICE constexpr Float8Fnuz(uint8_t bits, from_bits_t) : x(bits) {}
  OPREG_HOST_DEVICE Float8Fnuz(float f) : x(FloatToFnuz(f, kMantissaBits, kBias)) {}  // NOLINT
  OPREG_HOST_DEVICE operator float() const {                                          // NOLINT
    return FnuzToFloat(x, kMantissaBits, kBias);
  }
};

}  // namespace detail

using Float8E4M3FNUZ = detail::Float8Fnuz<3, 8>;   // max 240
using Float8E5M2FNUZ = detail::Float8Fnuz<2, 16>;  // max 57344

}  // namespace opreg
