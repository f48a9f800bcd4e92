// Internal: AVX2 building blocks for CPUs without AVX-512 (AMD before Zen 4, Intel client
// cores): the API of avx512.h (V, Mask, Load, Store, StoreEach, SumEach, ExpNonPositive, Silu, the
// arithmetic wrappers, ...) on eight lanes, so the row kernels in simd_rows.inc compile for either
// (simd_avx2.cc holds this region). The portable loops leave those kernels to the compiler, which
// converts f16 one element at a time and cannot vectorize a branch-free exp well; these convert in
// registers and use the same exp as avx512.h.
//
// Everything below OPREG_CPU_AVX2_BEGIN is compiled for AVX2 with FMA and F16C whatever the
// build's baseline, so it may only run after Supported() returned true.
//
// Masks: AVX2 has no mask registers, so a Mask here is a lane count (FirstLanes(m) = min(m, 8));
// a partial vector is read and written through a small stack copy, so no access goes past the
// data.
//
// Results: the same roundings as the AVX-512 paths (f16 and bf16 round to nearest even, NaNs
// canonicalized as Half::FromFloat and BFloat16::FromFloat do). 1 / x is vrcpps (relative error
// 1.5 * 2^-12) with a Newton step where the result is f32 or f16.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>

#include "opreg/core/half.h"
#include "simd/avx512.h"  // OPREG_CPU_HAVE_AVX512: the same compilers build both
#include "simd/exp_poly.h"

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
using Mask = int64_t;  // the number of lanes in use, from the first
inline constexpr int64_t kLanes = 8;

// The first m lanes (m <= 8: all).
inline Mask FirstLanes(int64_t m) { return m < kLanes ? m : kLanes; }

// Calls fn(T{}) (avx512::WithElementType's counterpart: no other element types here).
template <class T, class Fn>
void WithElementType(Fn&& fn) {
  fn(T{});
}

// The arithmetic the row kernels use, as in avx512.h. Min and Max return b when either operand is
// NaN.
inline V Set1(float x) { return _mm256_set1_ps(x); }
inline V Add(V a, V b) { return _mm256_add_ps(a, b); }
inline V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
inline V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
inline V MulAdd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline V Min(V a, V b) { return _mm256_min_ps(a, b); }
inline V Max(V a, V b) { return _mm256_max_ps(a, b); }
inline V Abs(V a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
// All ones in the first k lanes.
inline V LaneMask(Mask k) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)), lane));
}
// v with the lanes past the first k set to 0.
inline V ZeroPast(V v, Mask k) { return k == kLanes ? v : _mm256_and_ps(v, LaneMask(k)); }

// Eight elements at p, converted to f32. An f16 signaling NaN loads as the quiet NaN.
inline V LoadAll(const float* p) { return _mm256_loadu_ps(p); }
inline V LoadAll(const Half* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline V LoadAll(const BFloat16* p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

// The first k elements at p, converted to f32; the other lanes read as 0.
template <class T>
inline V Load(const T* p, Mask k) {
  if (k == kLanes) return LoadAll(p);
  alignas(32) T tmp[kLanes];
  std::memset(static_cast<void*>(tmp), 0, sizeof(tmp));
  std::memcpy(static_cast<void*>(tmp), p, static_cast<size_t>(k) * sizeof(T));
  return LoadAll(tmp);
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

// Stores the first k of eight 16-bit lanes.
inline void StoreBits(uint16_t* p, __m128i bits, Mask k) {
  if (k == kLanes) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bits);
    return;
  }
  alignas(16) uint16_t tmp[kLanes];
  _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bits);
  std::memcpy(p, tmp, static_cast<size_t>(k) * sizeof(uint16_t));
}

// Stores the first k lanes of v, rounded to the element type.
inline void Store(float* p, V v, Mask k) {
  if (k == kLanes) {
    _mm256_storeu_ps(p, v);
    return;
  }
  alignas(32) float tmp[kLanes];
  _mm256_store_ps(tmp, v);
  std::memcpy(p, tmp, static_cast<size_t>(k) * sizeof(float));
}
inline void Store(Half* p, V v, Mask k) { StoreBits(&p->x, ToHalfBits(v), k); }
inline void Store(BFloat16* p, V v, Mask k) { StoreBits(&p->x, ToBFloat16Bits(v), k); }

// Stores the first k lanes of v rounded to T, and returns the rounded values (as a later load
// would see them) without reading memory back.
inline V StoreRounded(float* p, V v, Mask k) {
  Store(p, v, k);
  return v;
}
inline V StoreRounded(Half* p, V v, Mask k) {
  const __m128i bits = ToHalfBits(v);
  StoreBits(&p->x, bits, k);
  return _mm256_cvtph_ps(bits);
}
inline V StoreRounded(BFloat16* p, V v, Mask k) {
  const __m128i bits = ToBFloat16Bits(v);
  StoreBits(&p->x, bits, k);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

// Stores the first k lanes of v, integers in [-127, 127], as int8 (rounded half to even).
inline void StoreInt8(int8_t* p, V v, Mask k) {
  const __m256i i32 = _mm256_cvtps_epi32(v);
  const __m128i i16 =
      _mm_packs_epi32(_mm256_castsi256_si128(i32), _mm256_extracti128_si256(i32, 1));
  const __m128i i8 = _mm_packs_epi16(i16, i16);
  if (k == kLanes) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), i8);
    return;
  }
  alignas(16) int8_t tmp[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(tmp), i8);
  std::memcpy(p, tmp, static_cast<size_t>(k));
}

// Eight lanes with a non-temporal store; p aligned to eight elements.
inline void StreamStore(float* p, V v) { _mm256_stream_ps(p, v); }
inline void StreamStore(Half* p, V v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), ToHalfBits(v));
}
inline void StreamStore(BFloat16* p, V v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), ToBFloat16Bits(v));
}

// The blocks simd_common.inc builds its loops from (see avx512.h).
inline constexpr Mask kAllLanes = kLanes;
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
inline V MaxWhere(Mask k, V v, V acc) {
  return _mm256_blendv_ps(acc, _mm256_max_ps(v, acc), LaneMask(k));
}

// The blocks simd_common.inc builds exp and silu from (see avx512.h). A Cond is a vector of
// all-ones and all-zeros lanes.
using Cond = V;
inline V NegMulAdd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
inline Cond NotLess(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_NLT_UQ); }
inline Cond NotGreater(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_NGT_UQ); }
inline Cond Less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
inline V MulIf(Cond c, V a, V b) { return _mm256_and_ps(c, _mm256_mul_ps(a, b)); }
inline V Pow2FromRounded(V t) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23));
}
// 1 / d within 1.5 * 2^-12 (vrcpps).
inline constexpr int kReciprocalBits = 11;
inline V ReciprocalEstimate(V d) { return _mm256_rcp_ps(d); }

#include "simd/simd_common.inc"

}  // namespace opreg::kernels::cpu::avx2

OPREG_CPU_AVX2_END

#endif  // OPREG_CPU_HAVE_AVX2
