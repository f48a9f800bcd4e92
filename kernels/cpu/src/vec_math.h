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

// Round half to even for |v| < 2^22: adding and subtracting 1.5 * 2^23 leaves the float
// rounding (round to nearest even) to the hardware.
inline float RoundHalfEven(float v) {
  constexpr float kMagic = 12582912.0f;
  return (v + kMagic) - kMagic;
}

// exp(x) to about 2 ulp (Cephes' expf polynomial after range reduction x = n ln2 + r), with
// exp(-inf) = 0, exp(+inf) = inf, NaN propagated; results below 2^-126 flush to 0.
//
// Written for GCC's vectorizer: out-of-range x is not clamped up front (the last selects replace
// those results anyway) because a select producing a constant lets jump threading specialize the
// rest of the function for it, and the vectorized loop then computes the polynomial twice; only
// n is clamped, just before its int conversion. floor() rounds with the magic number rather than
// through an int conversion, which GCC (with SSE4.1) turns into a truncf it fails to if-convert.
inline float ExpF(float x) {
  constexpr float kMax = 88.3762626647949f;
  constexpr float kMin = -87.3365447505531f;
  // n = round(x / ln2), computed as floor(x * log2(e) + 0.5); exact where it is used (|fx| <
  // 2^22 for x in [kMin, kMax]).
  const float fx = x * 1.44269504088896341f + 0.5f;
  float n = RoundHalfEven(fx);
  n = n > fx ? n - 1.0f : n;
  float r = x - n * 0.693359375f;  // ln2 split in two for an exact reduction
  r = r - n * -2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.0f;
  // n is in [-126, 128] for x in [kMin, kMax]; the clamp only keeps the conversion defined.
  float nc = n < 128.0f ? n : 128.0f;
  nc = nc > -127.0f ? nc : -127.0f;
  const float result = y * AsFloat(static_cast<uint32_t>(static_cast<int32_t>(nc) + 127) << 23);
  const float under = x < kMin ? 0.0f : result;
  const float over = x > kMax ? std::numeric_limits<float>::infinity() : under;
  return x != x ? x : over;  // NaN in, NaN out
}

// max(init, f(x[0]), ..., f(x[n-1])) as std::max would fold it left to right (NaNs never win),
// in 16 independent running maxima: GCC and Clang vectorize this, but neither vectorizes an
// `omp simd reduction(max:)` written with std::max (and Clang none over floats).
template <class T, class F>
inline float MaxOf(const T* x, int64_t n, float init, F f) {
  constexpr int64_t kLanes = 16;
  float lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = init;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
#pragma omp simd
    for (int64_t l = 0; l < kLanes; ++l) {
      const float v = f(static_cast<float>(x[j + l]));
      lanes[l] = lanes[l] < v ? v : lanes[l];
    }
  }
  float m = init;
  for (; j < n; ++j) {
    const float v = f(static_cast<float>(x[j]));
    m = m < v ? v : m;
  }
  for (int64_t l = 0; l < kLanes; ++l) m = m < lanes[l] ? lanes[l] : m;
  return m;
}

}  // namespace opreg::kernels::cpu::detail
