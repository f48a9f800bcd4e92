// Branch-free float math for kernel inner loops: written with selects instead of branches or
// libm calls, so `#pragma omp simd` loops over them vectorize (libm's expf and nearbyintf are
// calls GCC cannot vectorize without -ffast-math, which would also drop inf/NaN semantics).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace opreg::kernels::cpu::detail {

inline float AsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// exp(x) to about 2 ulp (Cephes' expf polynomial after range reduction x = n ln2 + r), with
// exp(-inf) = 0, exp(+inf) = inf, NaN propagated; results below 2^-126 flush to 0.
inline float ExpF(float x) {
  constexpr float kMax = 88.3762626647949f;
  constexpr float kMin = -87.3365447505531f;
  float xc = x > kMax ? kMax : x;
  xc = xc < kMin ? kMin : xc;
  // n = round(x / ln2), computed as floor(x * log2(e) + 0.5) with an int conversion.
  const float fx = xc * 1.44269504088896341f + 0.5f;
  float n = static_cast<float>(static_cast<int32_t>(fx));
  n = n > fx ? n - 1.0f : n;
  float r = xc - n * 0.693359375f;  // ln2 split in two for an exact reduction
  r = r - n * -2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.0f;
  const float result = y * AsFloat(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  const float under = x < kMin ? 0.0f : result;
  const float over = x > kMax ? std::numeric_limits<float>::infinity() : under;
  return x != x ? x : over;  // NaN in, NaN out
}

// Round half to even for |v| < 2^22: adding and subtracting 1.5 * 2^23 leaves the float
// rounding (round to nearest even) to the hardware.
inline float RoundHalfEven(float v) {
  constexpr float kMagic = 12582912.0f;
  return (v + kMagic) - kMagic;
}

}  // namespace opreg::kernels::cpu::detail
