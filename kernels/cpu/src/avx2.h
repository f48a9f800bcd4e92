// Internal: AVX2 building blocks for the exp-bound row kernels (silu_and_mul, softmax over the
// last dim, per_token_quant to int8) on CPUs without AVX-512 (AMD before Zen 4, Intel client
// cores). The portable loops leave those kernels to the compiler, which converts f16 one element
// at a time and cannot vectorize a branch-free exp well; these paths convert in registers and
// use the same exp as avx512.h, eight lanes at a time. Chosen at run time after the AVX-512
// paths (see avx512.h): a kernel calls them when avx512::Supported() is false and Supported()
// here is true.
//
// Everything below OPREG_CPU_AVX2_BEGIN is compiled for AVX2 with FMA and F16C whatever the
// build's baseline, so it may only run after Supported() returned true. A kernel's AVX2 path goes
// between OPREG_CPU_AVX2_BEGIN and OPREG_CPU_AVX2_END in its .cc, as with the AVX-512 region.
//
// Tails: AVX2 has no mask registers; the last partial vector of a row is read and written
// through a small stack copy (LoadPart, StorePart), so no access goes past the row.
//
// Results: the same roundings as the AVX-512 paths (f16 and bf16 round to nearest even, NaNs
// canonicalized as Half::FromFloat and BFloat16::FromFloat do). 1 / x is vrcpps (relative error
// 1.5 * 2^-12) with a Newton step where the result is f32 or f16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>

#include "avx512.h"  // OPREG_CPU_HAVE_AVX512: the same compilers build both
#include "exp_poly.h"
#include "opreg/core/half.h"

#if OPREG_CPU_HAVE_AVX512
#define OPREG_CPU_HAVE_AVX2 1
#define OPREG_CPU_AVX2_BEGIN                                                               \
  _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma,f16c,bmi,bmi2\")")            \
      _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
          _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define OPREG_CPU_AVX2_END _Pragma("GCC diagnostic pop") _Pragma("GCC pop_options")
#else
#define OPREG_CPU_HAVE_AVX2 0
#endif

namespace opreg::kernels::cpu::avx2 {

// Whether this CPU (and OS) runs the AVX2 paths (AVX2, FMA, F16C); false where they are not
// built, and when the environment variable OPREG_CPU_NO_AVX2 is set to anything but "0" (the tests
// run the portable loops that way). Read once per process; cheap and thread-safe.
bool Supported();

}  // namespace opreg::kernels::cpu::avx2

#if OPREG_CPU_HAVE_AVX2

OPREG_CPU_AVX2_BEGIN

namespace opreg::kernels::cpu::avx2 {

using V = __m256;
inline constexpr int64_t kLanes = 8;

// Eight elements at p, converted to f32. An f16 signaling NaN loads as the quiet NaN.
inline V Load(const float* p) { return _mm256_loadu_ps(p); }
inline V Load(const Half* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline V Load(const BFloat16* p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

// The first m (< 8) elements at p; the other lanes read as 0.
template <class T>
inline V LoadPart(const T* p, int64_t m) {
  alignas(32) T tmp[kLanes];
  std::memset(static_cast<void*>(tmp), 0, sizeof(tmp));
  std::memcpy(static_cast<void*>(tmp), p, static_cast<size_t>(m) * sizeof(T));
  return Load(tmp);
}

// v rounded to 16 bits as Half::FromFloat / BFloat16::FromFloat would, bit for bit.
inline __m128i ToHalfBits(V v) {
  const V nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  if (__builtin_expect(_mm256_movemask_ps(nan) != 0, 0)) {
    // vcvtps2ph keeps a NaN's top payload bits; Half::FromFloat gives every NaN payload 0x200.
    const V canonical = _mm256_or_ps(_mm256_and_ps(v, _mm256_set1_ps(-0.0f)),
                                     _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
    v = _mm256_blendv_ps(v, canonical, nan);
  }
  return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
inline __m128i ToBFloat16Bits(V v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
  const V nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  if (__builtin_expect(_mm256_movemask_ps(nan) != 0, 0)) {
    // The rounding above could carry a NaN's payload into its exponent: quiet NaN, sign kept.
    const __m256i quiet =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x8000)),
                        _mm256_set1_epi32(0x7fc0));
    r = _mm256_blendv_epi8(r, quiet, _mm256_castps_si256(nan));
  }
  // Lanes hold values below 2^16: pack them to 16 bits (per 128-bit half), then gather the halves.
  const __m256i packed = _mm256_packus_epi32(r, r);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

// Stores eight lanes of v, rounded to the element type.
inline void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
inline void Store(Half* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), ToHalfBits(v)); }
inline void Store(BFloat16* p, V v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), ToBFloat16Bits(v));
}

// Stores the first m (< 8) lanes of v.
template <class T>
inline void StorePart(T* p, V v, int64_t m) {
  alignas(32) T tmp[kLanes];
  Store(tmp, v);
  std::memcpy(static_cast<void*>(p), tmp, static_cast<size_t>(m) * sizeof(T));
}

// Eight lanes with a non-temporal store; p aligned to eight elements.
inline void StreamStore(float* p, V v) { _mm256_stream_ps(p, v); }
inline void StreamStore(Half* p, V v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), ToHalfBits(v));
}
inline void StreamStore(BFloat16* p, V v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), ToBFloat16Bits(v));
}

// Stores f(j, m), the f32 values of out[j .. j + m) (m = 8 but at the tail), for all of [0, n).
// f loads its inputs with Load (m = 8) or LoadPart. `stream`: the part of out aligned to eight
// elements is written with non-temporal stores (the caller fences, see StreamFence in common.h).
template <class T, class F>
inline void StoreEach(T* out, int64_t n, bool stream, F&& f) {
  int64_t j = 0;
  constexpr uintptr_t kVecBytes = kLanes * sizeof(T);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
  if (stream && addr % sizeof(T) == 0) {
    const int64_t head = std::min<int64_t>(
        n, static_cast<int64_t>(((kVecBytes - addr % kVecBytes) % kVecBytes) / sizeof(T)));
    if (head > 0) StorePart(out, f(int64_t{0}, head), head);
    for (j = head; j + kLanes <= n; j += kLanes) StreamStore(out + j, f(j, kLanes));
  } else {
    for (; j + kLanes <= n; j += kLanes) Store(out + j, f(j, kLanes));
  }
  if (j < n) StorePart(out + j, f(j, n - j), n - j);
}

// Loads eight elements at p, or the first m through LoadPart.
template <class T>
inline V LoadN(const T* p, int64_t m) {
  return m == kLanes ? Load(p) : LoadPart(p, m);
}

inline float ReduceAdd(V v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float ReduceMax(V v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Sum over [0, n) of f(j, m) (lanes past m must be 0, as LoadPart gives them), in four
// accumulators.
template <class F>
inline float SumEach(int64_t n, F&& f) {
  V a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t j = 0;
  for (; j + 4 * kLanes <= n; j += 4 * kLanes) {
    a0 = _mm256_add_ps(a0, f(j, kLanes));
    a1 = _mm256_add_ps(a1, f(j + kLanes, kLanes));
    a2 = _mm256_add_ps(a2, f(j + 2 * kLanes, kLanes));
    a3 = _mm256_add_ps(a3, f(j + 3 * kLanes, kLanes));
  }
  for (; j < n; j += kLanes) a0 = _mm256_add_ps(a0, f(j, std::min(kLanes, n - j)));
  return ReduceAdd(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

// max(init, f(j, m) over [0, n)), lanes past m ignored, in four accumulators. NaNs never win
// (vmaxps returns its second operand, the accumulator, when either is NaN), as in avx512.h.
template <class F>
inline float MaxEach(int64_t n, float init, F&& f) {
  V a0 = _mm256_set1_ps(init), a1 = a0, a2 = a0, a3 = a0;
  int64_t j = 0;
  for (; j + 4 * kLanes <= n; j += 4 * kLanes) {
    a0 = _mm256_max_ps(f(j, kLanes), a0);
    a1 = _mm256_max_ps(f(j + kLanes, kLanes), a1);
    a2 = _mm256_max_ps(f(j + 2 * kLanes, kLanes), a2);
    a3 = _mm256_max_ps(f(j + 3 * kLanes, kLanes), a3);
  }
  for (; j < n; j += kLanes) {
    const int64_t m = std::min(kLanes, n - j);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const V valid =
        _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(m)), lane));
    a0 = _mm256_blendv_ps(a0, _mm256_max_ps(f(j, m), a0), valid);
  }
  return ReduceMax(_mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3)));
}

// exp(r) ~ P(r) (exp_poly.h) for results rounded to T, or P(-q) when kNegated.
template <class T, bool kNegated = false>
inline V ExpPoly(V r) {
  constexpr size_t kTerms = std::size(exp_poly::Poly<T>());
  auto c = [](size_t i) {
    return kNegated ? exp_poly::NegatedCoefficient<T>(i) : exp_poly::Poly<T>()[i];
  };
  V y = _mm256_set1_ps(c(0));
  for (size_t i = 1; i < kTerms; ++i) y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(c(i)));
  return y;
}

// r = x - n ln2 (or -r = a + n ln2 for x = -a when kNegated), in two parts for f32 results.
template <class T, bool kNegated = false>
inline V ReduceLn2(V n, V x) {
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (kNegated) {
      return _mm256_fmadd_ps(n, _mm256_set1_ps(exp_poly::kLn2Lo),
                             _mm256_fmadd_ps(n, _mm256_set1_ps(exp_poly::kLn2Hi), x));
    } else {
      return _mm256_fnmadd_ps(n, _mm256_set1_ps(exp_poly::kLn2Lo),
                              _mm256_fnmadd_ps(n, _mm256_set1_ps(exp_poly::kLn2Hi), x));
    }
  } else {
    return kNegated ? _mm256_fmadd_ps(n, _mm256_set1_ps(exp_poly::kLn2), x)
                    : _mm256_fnmadd_ps(n, _mm256_set1_ps(exp_poly::kLn2), x);
  }
}

// 2^n from t = n + kRoundBias (see avx512::Pow2FromRounded).
inline V Pow2FromRounded(V t) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23));
}

// exp(x) for x <= 0 (and NaN: NaN): avx512::ExpNonPositive (see there) on eight lanes.
template <class T>
inline V ExpNonPositive(V x) {
  const V keep = _mm256_cmp_ps(x, _mm256_set1_ps(exp_poly::kMinArg), _CMP_NLT_UQ);
  const V bias = _mm256_set1_ps(exp_poly::kRoundBias);
  const V t = _mm256_fmadd_ps(x, _mm256_set1_ps(exp_poly::kLog2e), bias);
  const V y = ExpPoly<T>(ReduceLn2<T>(_mm256_sub_ps(t, bias), x));
  return _mm256_and_ps(keep, _mm256_mul_ps(y, Pow2FromRounded(t)));
}

// 1 / d: vrcpps, plus a Newton step unless T is bf16 (whose rounding, 2^-8, is far coarser than
// vrcpps's error). 1 / inf = 0 stays 0.
template <class T>
inline V Reciprocal(V d) {
  V rcp = _mm256_rcp_ps(d);
  if constexpr (!std::is_same_v<T, BFloat16>) {
    const V finite =
        _mm256_cmp_ps(d, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
    rcp = _mm256_and_ps(finite, _mm256_mul_ps(rcp, _mm256_fnmadd_ps(d, rcp, _mm256_set1_ps(2.0f))));
  }
  return rcp;
}

// silu(a) = a / (1 + exp(-a)), as avx512::Silu (see there): silu(-inf) is NaN, silu(+inf) = inf,
// NaN stays NaN.
template <class T>
inline V Silu(V a) {
  const V ac = _mm256_max_ps(_mm256_set1_ps(-88.7f), a);  // a when a is NaN
  const V keep = _mm256_cmp_ps(ac, _mm256_set1_ps(-exp_poly::kMinArg), _CMP_NGT_UQ);
  const V bias = _mm256_set1_ps(exp_poly::kRoundBias);
  const V t = _mm256_fnmadd_ps(ac, _mm256_set1_ps(exp_poly::kLog2e), bias);
  const V y = ExpPoly<T, true>(ReduceLn2<T, true>(_mm256_sub_ps(t, bias), ac));
  const V e = _mm256_and_ps(keep, _mm256_mul_ps(y, Pow2FromRounded(t)));
  return _mm256_mul_ps(a, Reciprocal<T>(_mm256_add_ps(_mm256_set1_ps(1.0f), e)));
}

}  // namespace opreg::kernels::cpu::avx2

OPREG_CPU_AVX2_END

#endif  // OPREG_CPU_HAVE_AVX2
