// Internal: the constants of the vector exp shared by the AVX-512 and AVX2 paths (avx512.h,
// avx2.h), so both compute the same function: exp(x) = 2^n exp(r), x = n ln2 + r, |r| <= ln2 / 2,
// with n rounded by adding kRoundBias (the float addition leaves n + 127, the biased exponent of
// 2^n, in the sum's low mantissa bits) and exp(r) a polynomial in Horner form.
#pragma once

#include <cstddef>
#include <type_traits>

namespace opreg::kernels::cpu::exp_poly {

inline constexpr float kLog2e = 1.44269504088896341f;
// 1.5 * 2^23 + 127: adding it to a float below 2^22 in magnitude rounds to an integer n and
// leaves the bits of n + 127 at the bottom of the sum.
inline constexpr float kRoundBias = 12583039.0f;
// ln(2^-126): exp below it is 0 (smaller results would need a subnormal 2^n).
inline constexpr float kMinArg = -87.3365447505531f;
// ln2 in two parts (the first exact in 9 bits, so n * kLn2Hi is exact) for f32 results; in one
// part for f16 and bf16 results (error below 3e-7 for |n| <= 126).
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kLn2 = 0.693147180559945f;

// exp(r) ~ P(r), coefficients from the highest degree down. f32 results: Cephes' degree-7
// polynomial (within 2 ulp with the two-part reduction). f16 and bf16 results: a degree-4 fit
// (relative error 5.4e-6, fitted on |r| <= ln2 / 2 for relative error), far below their rounding
// (2^-11, 2^-8) and three multiply-adds cheaper.
inline constexpr float kPolyF32[] = {1.9875691500e-4f,
                                     1.3981999507e-3f,
                                     8.3334519073e-3f,
                                     4.1665795894e-2f,
                                     1.6666665459e-1f,
                                     5.0000001201e-1f,
                                     1.0f,
                                     1.0f};
inline constexpr float kPoly16[] = {0.04127759486436844f, 0.1675349771976471f, 0.5000511407852173f,
                                    1.0f, 1.0f};

// The polynomial for results rounded to T.
template <class T>
constexpr const auto& Poly() {
  if constexpr (std::is_same_v<T, float>) {
    return kPolyF32;
  } else {
    return kPoly16;
  }
}

// Coefficient i of P(-q) as a polynomial in q (odd degrees change sign): the silu paths reduce
// -a, and get -r from one multiply-add.
template <class T>
constexpr float NegatedCoefficient(size_t i) {
  constexpr size_t kDegree = std::size(Poly<T>()) - 1;
  return (kDegree - i) % 2 == 1 ? -Poly<T>()[i] : Poly<T>()[i];
}

}  // namespace opreg::kernels::cpu::exp_poly
