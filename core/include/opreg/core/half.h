// Storage types for the 16- and 8-bit floating-point dtypes: Half (IEEE binary16), BFloat16,
// Float8E4M3FN and Float8E5M2 (OCP FP8). Each holds its raw bits and converts to and from float.
//
// Conversions from float round to nearest, ties to even, and are exact for every value the
// format can represent. NaN maps to a quiet NaN of the same sign. Overflow:
//   - Half, BFloat16, Float8E5M2 have infinities: values beyond the largest finite value round to
//     +-inf as IEEE rounding dictates (65520 -> inf for Half).
//   - Float8E4M3FN has no infinity: conversion saturates, so anything (including +-inf) whose
//     magnitude rounds above 448 becomes +-448; only NaN becomes NaN (0x7f / 0xff). This is the
//     __NV_SATFINITE behaviour of CUDA's fp8 conversions (torch's CPU scalar conversion instead
//     gives NaN for |x| >= 480).
//
// All functions are OPREG_HOST_DEVICE so CUDA kernels can use the same types.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "opreg/core/macros.h"

namespace opreg {
namespace detail {

OPREG_HOST_DEVICE inline uint32_t FloatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
OPREG_HOST_DEVICE inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Rounds the magnitude `abs_bits` of a finite or infinite float (sign cleared, not NaN) to a
// binary format with `ebits` exponent bits (IEEE bias) and `mbits` mantissa bits, returning the
// unsigned encoding. The result may exceed the largest finite encoding; callers clamp it.
OPREG_HOST_DEVICE inline uint32_t RoundFloatMagnitude(uint32_t abs_bits, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const int float_exp = static_cast<int>(abs_bits >> 23);
  const uint32_t mant = abs_bits & 0x7fffffu;
  const int e = float_exp - 127 + bias;  // Biased exponent in the target format.
  uint32_t value;
  int shift;
  if (e >= 1) {
    // Normal in the target: drop low mantissa bits; a carry into the exponent is correct.
    value = (static_cast<uint32_t>(e) << 23) | mant;
    shift = 23 - mbits;
  } else {
    // Subnormal (or zero) in the target: the significand with its implicit bit, in units of the
    // target's smallest subnormal.
    if (float_exp == 0) return 0;  // Float subnormals are far below every target's range.
    value = mant | 0x800000u;
    shift = (23 - mbits) + (1 - e);
    if (shift > 24) return 0;  // Less than half the smallest subnormal.
  }
  uint32_t result = value >> shift;
  const uint32_t rem = value & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (result & 1u))) ++result;
  return result;
}

// Decodes a small binary float to float. `has_inf_nan`: IEEE-style all-ones exponent (Half,
// E5M2); otherwise only all-ones exponent and mantissa is NaN (E4M3FN).
OPREG_HOST_DEVICE inline float DecodeSmallFloat(uint32_t bits, int ebits, int mbits,
                                                bool has_inf_nan) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t emax = (1u << ebits) - 1u;
  const uint32_t mmask = (1u << mbits) - 1u;
  const uint32_t sign = ((bits >> (ebits + mbits)) & 1u) << 31;
  const uint32_t exp = (bits >> mbits) & emax;
  uint32_t mant = bits & mmask;
  if (has_inf_nan && exp == emax) return BitsToFloat(sign | 0x7f800000u | (mant << (23 - mbits)));
  if (!has_inf_nan && exp == emax && mant == mmask) return BitsToFloat(sign | 0x7fc00000u);
  if (exp == 0) {
    if (mant == 0) return BitsToFloat(sign);
    int e = 1 - bias + 127;  // Normalize the subnormal.
    while ((mant & (1u << mbits)) == 0) {
      mant <<= 1;
      --e;
    }
    mant &= mmask;
    return BitsToFloat(sign | (static_cast<uint32_t>(e) << 23) | (mant << (23 - mbits)));
  }
  return BitsToFloat(sign | ((exp - bias + 127) << 23) | (mant << (23 - mbits)));
}

OPREG_HOST_DEVICE inline bool FloatBitsIsNaN(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

}  // namespace detail

// Tag for constructing a value from its raw bit pattern. `T::from_bits()` returns it too (the
// spelling of c10's types: `Half(0x7c00, Half::from_bits())`).
struct FromBitsTag {};
inline constexpr FromBitsTag kFromBits{};

// Each type below is trivially default-constructible, as c10's are: `T t;` leaves t
// uninitialized and `T()` / `T{}` is +0. Kernel code keeps these types in unions (vLLM's
// fp8 quantization packs them into a `union { uint32_t u; fp8_t f[4]; }`), which a default
// member initializer would make impossible to default-construct.

// IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits. Max 65504.
struct Half {
  uint16_t x;  // no initializer: trivially default-constructible (see above)

  Half() = default;
  OPREG_HOST_DEVICE constexpr Half(uint16_t bits, FromBitsTag) : x(bits) {}
  using from_bits_t = FromBitsTag;
  OPREG_HOST_DEVICE static constexpr FromBitsTag from_bits() { return FromBitsTag(); }
  OPREG_HOST_DEVICE Half(float f) : x(FromFloat(f)) {}  // NOLINT: implicit like c10::Half.
  // Both conversions are branch-free (every case is computed and selected), so loops over
  // halves vectorize; the float additions do the rounding of subnormals in round-to-nearest-even.
  OPREG_HOST_DEVICE operator float() const {  // NOLINT
    const uint32_t h = x;
    const uint32_t shifted_exp = 0x7c00u << 13;
    uint32_t o = (h & 0x7fffu) << 13;  // exponent and mantissa in float position
    const uint32_t exp = shifted_exp & o;
    o += (127u - 15u) << 23;  // rebias the exponent
    const uint32_t inf_nan = o + ((128u - 16u) << 23);
    // Zero and subnormals: renormalize with one float subtraction (exact).
    const uint32_t sub =
        detail::FloatToBits(detail::BitsToFloat(o + (1u << 23)) - detail::BitsToFloat(113u << 23));
    o = exp == shifted_exp ? inf_nan : (exp == 0 ? sub : o);
    return detail::BitsToFloat(o | ((h & 0x8000u) << 16));
  }

  OPREG_HOST_DEVICE static uint16_t FromFloat(float f) {
    uint32_t u = detail::FloatToBits(f);
    const uint32_t sign = u & 0x80000000u;
    u ^= sign;
    const uint32_t f32_inf = 255u << 23;
    const uint32_t f16_max = (127u + 16u) << 23;  // first float that overflows to infinity
    const uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    // Overflow to infinity; NaN to a quiet NaN.
    const uint32_t big = u > f32_inf ? 0x7e00u : 0x7c00u;
    // Results below the smallest normal: the float addition rounds them to nearest even.
    const uint32_t small =
        detail::FloatToBits(detail::BitsToFloat(u) + detail::BitsToFloat(denorm_magic)) -
        denorm_magic;
    // Normal results: rebias, round to nearest even on the 13 dropped bits.
    const uint32_t mant_odd = (u >> 13) & 1u;
    const uint32_t normal = (u + ((15u - 127u) << 23) + 0xfffu + mant_odd) >> 13;
    const uint32_t o = u >= f16_max ? big : (u < (113u << 23) ? small : normal);
    return static_cast<uint16_t>(o | (sign >> 16));
  }
};

// bfloat16: the top 16 bits of a float (1 sign, 8 exponent, 7 mantissa bits).
struct BFloat16 {
  uint16_t x;  // no initializer: trivially default-constructible (see above)

  BFloat16() = default;
  OPREG_HOST_DEVICE constexpr BFloat16(uint16_t bits, FromBitsTag) : x(bits) {}
  using from_bits_t = FromBitsTag;
  OPREG_HOST_DEVICE static constexpr FromBitsTag from_bits() { return FromBitsTag(); }
  OPREG_HOST_DEVICE BFloat16(float f) : x(FromFloat(f)) {}  // NOLINT
  OPREG_HOST_DEVICE operator float() const {                // NOLINT
    return detail::BitsToFloat(static_cast<uint32_t>(x) << 16);
  }

  OPREG_HOST_DEVICE static uint16_t FromFloat(float f) {
    const uint32_t u = detail::FloatToBits(f);
    // Round to nearest even on the dropped 16 bits; a carry may reach infinity, as it should.
    // NaN becomes a quiet NaN. Branch-free, so conversion loops vectorize.
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
    return static_cast<uint16_t>(detail::FloatBitsIsNaN(u) ? nan : rounded);
  }
};

// OCP FP8 E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, NaN = S.1111.111,
// max 448. Conversion from float saturates (see the file comment).
struct Float8E4M3FN {
  uint8_t x;  // no initializer: trivially default-constructible (see above)

  Float8E4M3FN() = default;
  OPREG_HOST_DEVICE constexpr Float8E4M3FN(uint8_t bits, FromBitsTag) : x(bits) {}
  using from_bits_t = FromBitsTag;
  OPREG_HOST_DEVICE static constexpr FromBitsTag from_bits() { return FromBitsTag(); }
  OPREG_HOST_DEVICE Float8E4M3FN(float f) : x(FromFloat(f)) {}  // NOLINT
  OPREG_HOST_DEVICE operator float() const {                    // NOLINT
    return detail::DecodeSmallFloat(x, 4, 3, false);
  }

  OPREG_HOST_DEVICE static uint8_t FromFloat(float f) {
    const uint32_t u = detail::FloatToBits(f);
    const uint32_t sign = (u >> 24) & 0x80u;
    if (detail::FloatBitsIsNaN(u)) return static_cast<uint8_t>(sign | 0x7fu);
    uint32_t r = detail::RoundFloatMagnitude(u & 0x7fffffffu, 4, 3);
    if (r > 0x7eu) r = 0x7eu;  // Saturate to 448 (0x7f is NaN).
    return static_cast<uint8_t>(sign | r);
  }
};

// OCP FP8 E5M2: 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-style inf/NaN, max 57344.
struct Float8E5M2 {
  uint8_t x;  // no initializer: trivially default-constructible (see above)

  Float8E5M2() = default;
  OPREG_HOST_DEVICE constexpr Float8E5M2(uint8_t bits, FromBitsTag) : x(bits) {}
  using from_bits_t = FromBitsTag;
  OPREG_HOST_DEVICE static constexpr FromBitsTag from_bits() { return FromBitsTag(); }
  OPREG_HOST_DEVICE Float8E5M2(float f) : x(FromFloat(f)) {}  // NOLINT
  OPREG_HOST_DEVICE operator float() const {                  // NOLINT
    return detail::DecodeSmallFloat(x, 5, 2, true);
  }

  OPREG_HOST_DEVICE static uint8_t FromFloat(float f) {
    const uint32_t u = detail::FloatToBits(f);
    const uint32_t sign = (u >> 24) & 0x80u;
    if (detail::FloatBitsIsNaN(u)) return static_cast<uint8_t>(sign | 0x7eu);
    uint32_t r = detail::RoundFloatMagnitude(u & 0x7fffffffu, 5, 2);
    if (r > 0x7cu) r = 0x7cu;  // Overflow rounds to infinity.
    return static_cast<uint8_t>(sign | r);
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit float types must be 2 bytes");
static_assert(sizeof(Float8E4M3FN) == 1 && sizeof(Float8E5M2) == 1, "fp8 types must be 1 byte");

namespace detail {

// std::numeric_limits of a small binary float format, from its bit patterns. kInfinity is 0 for
// a format without infinities (has_infinity is then false and infinity() is T(), as the
// standard asks). kHalf is the pattern of 0.5 (round_error()).
template <class T, class Bits, int kDigits, int kMinExp, int kMaxExp, Bits kMin, Bits kMax,
          Bits kLowest, Bits kEpsilon, Bits kInfinity, Bits kNaN, Bits kDenormMin, Bits kHalf>
struct SmallFloatLimits {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = kInfinity != 0;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = false;
  static constexpr auto has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr auto round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = kDigits;
  static constexpr int digits10 = kDigits <= 4 ? 0 : (kDigits - 1) * 3 / 10;
  static constexpr int max_digits10 = kDigits <= 4 ? 3 : (kDigits * 3 + 9) / 10 + 1;
  static constexpr int radix = 2;
  static constexpr int min_exponent = kMinExp;
  static constexpr int min_exponent10 = kMinExp * 3 / 10;
  static constexpr int max_exponent = kMaxExp;
  static constexpr int max_exponent10 = kMaxExp * 3 / 10;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;
  OPREG_HOST_DEVICE static constexpr T min() { return T(kMin, kFromBits); }
  OPREG_HOST_DEVICE static constexpr T lowest() { return T(kLowest, kFromBits); }
  OPREG_HOST_DEVICE static constexpr T max() { return T(kMax, kFromBits); }
  OPREG_HOST_DEVICE static constexpr T epsilon() { return T(kEpsilon, kFromBits); }
  OPREG_HOST_DEVICE static constexpr T round_error() { return T(kHalf, kFromBits); }
  OPREG_HOST_DEVICE static constexpr T infinity() { return T(kInfinity, kFromBits); }
  OPREG_HOST_DEVICE static constexpr T quiet_NaN() { return T(kNaN, kFromBits); }
  OPREG_HOST_DEVICE static constexpr T signaling_NaN() { return T(kNaN, kFromBits); }
  OPREG_HOST_DEVICE static constexpr T denorm_min() { return T(kDenormMin, kFromBits); }
};

}  // namespace detail
}  // namespace opreg

// numeric_limits for the 16- and 8-bit types (quantization code reads max() and lowest()).
namespace std {
template <>
class numeric_limits<opreg::Half>
    : public opreg::detail::SmallFloatLimits<opreg::Half, uint16_t, 11, -13, 16, 0x0400, 0x7bff,
                                             0xfbff, 0x1400, 0x7c00, 0x7e00, 0x0001, 0x3800> {};
template <>
class numeric_limits<opreg::BFloat16>
    : public opreg::detail::SmallFloatLimits<opreg::BFloat16, uint16_t, 8, -125, 128, 0x0080,
                                             0x7f7f, 0xff7f, 0x3c00, 0x7f80, 0x7fc0, 0x0001,
                                             0x3f00> {};
// E4M3FN: max 448, min normal 2^-6, epsilon 2^-3, no infinity.
template <>
class numeric_limits<opreg::Float8E4M3FN>
    : public opreg::detail::SmallFloatLimits<opreg::Float8E4M3FN, uint8_t, 4, -5, 9, 0x08, 0x7e,
                                             0xfe, 0x20, 0x00, 0x7f, 0x01, 0x30> {};
// E5M2: max 57344, min normal 2^-14, epsilon 2^-2.
template <>
class numeric_limits<opreg::Float8E5M2>
    : public opreg::detail::SmallFloatLimits<opreg::Float8E5M2, uint8_t, 3, -13, 16, 0x04, 0x7b,
                                             0xfb, 0x34, 0x7c, 0x7e, 0x01, 0x38> {};

}  // namespace std
