// Internal: AVX-512 building blocks for the fast paths of the row and elementwise kernels.
//
// The multiversioned loops (multiversion.h) leave vectorization to the compiler, and GCC cannot
// vectorize what the f16 kernels and the exp-bound kernels need most: f16 <-> f32 conversion in
// registers (it emits scalar vcvtph2ps; half_convert.h works around that with extra passes over
// L1 buffers, which cost as much as the memory traffic), and exp with the AVX-512 instructions
// cheap enough for memory speed. The row kernels written on these blocks (simd_rows.inc:
// add/mul/split_add, rms_norm, fused_add_rms_norm_, silu_and_mul, per_token_quant int8, softmax
// over the last dim) run when Supported(); avx2.h offers the same blocks under the same names for
// CPUs without AVX-512, and the portable loops serve every other CPU and compiler.
//
// Everything below OPREG_CPU_AVX512_BEGIN is compiled for AVX-512 (F, BW, DQ, VL) with FMA and
// F16C whatever the build's baseline, so it may only run after Supported() returned true. Code
// built on it goes between OPREG_CPU_AVX512_BEGIN and OPREG_CPU_AVX512_END (a region, rather than
// per-function attributes, so that lambdas and template instances there are compiled for AVX-512
// too; simd_avx512.cc holds the one region), and is called from outside the region only through
// functions that are not inlined into baseline code.
//
// Results: the same roundings as the portable loops (f16 and bf16 round to nearest even, NaNs
// canonicalized as Half::FromFloat and BFloat16::FromFloat do; bf16 is rounded with integer
// arithmetic, or vcvtneps2bf16 where it gives the same bits). ExpNonPositive and Silu differ from
// the portable loops' ExpF and division in the last bits (see simd_common.inc).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>

#include "opreg/core/half.h"
#include "simd/exp_poly.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OPREG_CPU_HAVE_AVX512 1
#include <immintrin.h>
// The unmasked AVX-512 intrinsics start from _mm512_undefined_*, on which GCC 12 reports false
// -W[maybe-]uninitialized warnings (GCC bug 105593); silenced for the region.
#define OPREG_CPU_AVX512_BEGIN                                                                \
  _Pragma("GCC push_options") _Pragma(                                                        \
      "GCC target(\"avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512dq,avx512vl,avx512bf16\")") \
      _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")    \
          _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define OPREG_CPU_AVX512_END _Pragma("GCC diagnostic pop") _Pragma("GCC pop_options")
#else
#define OPREG_CPU_HAVE_AVX512 0
#endif

namespace opreg::kernels::cpu::avx512 {

// Whether this CPU (and OS) runs the AVX-512 paths; false where they are not built, and when the
// environment variable OPREG_CPU_NO_AVX512 is set to anything but "0" (the tests run the other
// paths that way too). Read once per process; cheap and thread-safe.
bool Supported();

// bf16 elements (the layout and the results of BFloat16) whose conversion from f32 uses
// AVX512_BF16's vcvtneps2bf16, five instructions fewer than the integer rounding; NaN and
// subnormal lanes, where that instruction differs (it keeps NaN payloads and flushes
// subnormals), take the integer rounding.
struct BFloat16Fast {
  uint16_t x;
};

// Whether Supported() and the CPU has AVX512_BF16. Cheap after the first call; thread-safe.
bool HasBFloat16Instructions();

// linear's decode path for bf16 (simd/linear_bf16_avx512.cc): columns [j0, j1) of
// y[m, n] = x[m, k] @ w[n, k]^T (+ bias) for m <= 8 rows, with vdpbf16ps. Only after
// HasBFloat16Instructions() returned true.
void SkinnyColumnsBf16Dot(const BFloat16* x, const BFloat16* w, const BFloat16* bias,
                          BFloat16* y, int64_t m, int64_t n, int64_t k, int64_t j0, int64_t j1);

// Calls fn(E{}) with E = BFloat16Fast when T is BFloat16 and HasBFloat16Instructions(), else with
// E = T; fn reinterprets its T pointers as E pointers.
template <class T, class Fn>
void WithElementType(Fn&& fn) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (HasBFloat16Instructions()) {
      fn(BFloat16Fast{});
      return;
    }
  }
  fn(T{});
}

}  // namespace opreg::kernels::cpu::avx512

#if OPREG_CPU_HAVE_AVX512

OPREG_CPU_AVX512_BEGIN

namespace opreg::kernels::cpu::avx512 {

using V = __m512;
using Mask = __mmask16;
inline constexpr int64_t kLanes = 16;

// The first m lanes (m <= 16: all).
inline Mask FirstLanes(int64_t m) {
  return m >= kLanes ? Mask(0xffff) : static_cast<Mask>((1u << m) - 1u);
}

// The arithmetic the row kernels (simd_rows.inc) use, under the names both backends share.
// Min and Max return b when either operand is NaN (vminps / vmaxps).
inline V Set1(float x) { return _mm512_set1_ps(x); }
inline V Add(V a, V b) { return _mm512_add_ps(a, b); }
inline V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
inline V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
inline V MulAdd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }  // a * b + c, one rounding
inline V Min(V a, V b) { return _mm512_min_ps(a, b); }
inline V Max(V a, V b) { return _mm512_max_ps(a, b); }
inline V Abs(V a) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)));
}
// v with the lanes outside k set to 0.
inline V ZeroPast(V v, Mask k) { return _mm512_maskz_mov_ps(k, v); }

// Stores the lanes in k of v, integers in [-127, 127], as int8 (rounded half to even).
inline void StoreInt8(int8_t* p, V v, Mask k) {
  _mm_mask_storeu_epi8(p, k, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
}

// bf16 bits (16 lanes) as floats.
inline V BFloat16BitsToFloat(__m256i bits) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

// Up to 16 elements at p (the lanes in k; others read as 0), converted to f32. An f16 signaling
// NaN loads as the quiet NaN (vcvtph2ps): every kernel result goes through arithmetic, which
// quiets it anyway.
inline V Load(const float* p, Mask k) { return _mm512_maskz_loadu_ps(k, p); }
inline V Load(const Half* p, Mask k) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, p)); }
inline V Load(const BFloat16* p, Mask k) {
  return BFloat16BitsToFloat(_mm256_maskz_loadu_epi16(k, p));
}

inline V Load(const BFloat16Fast* p, Mask k) {
  return Load(reinterpret_cast<const BFloat16*>(p), k);
}

// v rounded to 16 bits as Half::FromFloat / BFloat16::FromFloat would, bit for bit.
inline __m256i ToHalfBits(V v) {
  const Mask nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  if (__builtin_expect(nan != 0, 0)) {
    // vcvtps2ph keeps a NaN's top payload bits; Half::FromFloat gives every NaN payload 0x200.
    const __m512i canonical =
        _mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN)),
                        _mm512_set1_epi32(0x7fc00000));
    v = _mm512_mask_mov_ps(v, nan, _mm512_castsi512_ps(canonical));
  }
  return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
inline __m256i ToBFloat16Bits(V v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
  const Mask nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m512i quiet =
      _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x8000)),
                      _mm512_set1_epi32(0x7fc0));
  r = _mm512_mask_mov_epi32(r, nan, quiet);
  return _mm512_cvtepi32_epi16(r);
}

// ToBFloat16Bits with vcvtneps2bf16 (AVX512_BF16 only) where it gives the same bits.
inline __m256i ToBFloat16BitsFast(V v) {
  // fpclass 0xa1: quiet NaN, signaling NaN, subnormal.
  if (__builtin_expect(_mm512_fpclass_ps_mask(v, 0xa1) != 0, 0)) return ToBFloat16Bits(v);
  return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
}

// Stores the lanes in k of v, rounded to the element type.
inline void Store(float* p, V v, Mask k) { _mm512_mask_storeu_ps(p, k, v); }
inline void Store(Half* p, V v, Mask k) { _mm256_mask_storeu_epi16(p, k, ToHalfBits(v)); }
inline void Store(BFloat16* p, V v, Mask k) { _mm256_mask_storeu_epi16(p, k, ToBFloat16Bits(v)); }
inline void Store(BFloat16Fast* p, V v, Mask k) {
  _mm256_mask_storeu_epi16(p, k, ToBFloat16BitsFast(v));
}

// Stores the lanes in k of v rounded to T, and returns the rounded values (as a later load would
// see them) without reading memory back.
inline V StoreRounded(float* p, V v, Mask k) {
  _mm512_mask_storeu_ps(p, k, v);
  return v;
}
inline V StoreRounded(Half* p, V v, Mask k) {
  const __m256i bits = ToHalfBits(v);
  _mm256_mask_storeu_epi16(p, k, bits);
  return _mm512_cvtph_ps(bits);
}
inline V StoreRounded(BFloat16* p, V v, Mask k) {
  const __m256i bits = ToBFloat16Bits(v);
  _mm256_mask_storeu_epi16(p, k, bits);
  return BFloat16BitsToFloat(bits);
}
inline V StoreRounded(BFloat16Fast* p, V v, Mask k) {
  const __m256i bits = ToBFloat16BitsFast(v);
  _mm256_mask_storeu_epi16(p, k, bits);
  return BFloat16BitsToFloat(bits);
}

// All 16 lanes with a non-temporal store; p aligned to 16 elements.
inline void StreamStore(float* p, V v) { _mm512_stream_ps(p, v); }
inline void StreamStore(Half* p, V v) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), ToHalfBits(v));
}
inline void StreamStore(BFloat16* p, V v) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), ToBFloat16Bits(v));
}
inline void StreamStore(BFloat16Fast* p, V v) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), ToBFloat16BitsFast(v));
}

// The blocks simd_common.inc builds its loops from: all lanes, horizontal sum and max, and
// max(acc, v) in the lanes of k (acc elsewhere; acc when either is NaN).
inline constexpr Mask kAllLanes = 0xffff;
inline float ReduceAdd(V v) { return _mm512_reduce_add_ps(v); }
inline float ReduceMax(V v) { return _mm512_reduce_max_ps(v); }
inline V MaxWhere(Mask k, V v, V acc) { return _mm512_mask_max_ps(acc, k, v, acc); }

// The blocks simd_common.inc builds exp and silu from. A Cond is a lane mask.
using Cond = Mask;
inline V NegMulAdd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a * b
// Comparisons; NotLess and NotGreater are true for NaN lanes, Less is false.
inline Cond NotLess(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ); }
inline Cond NotGreater(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_NGT_UQ); }
inline Cond Less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
// a * b where c holds, 0 elsewhere.
inline V MulIf(Cond c, V a, V b) { return _mm512_maskz_mul_ps(c, a, b); }
// 2^n from t = n + kRoundBias (exp_poly.h): shifting t's bits left by 23 drops its exponent and
// moves n + 127 into the exponent field.
inline V Pow2FromRounded(V t) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(t), 23));
}
// 1 / d within 2^-kReciprocalBits (vrcp14ps).
inline constexpr int kReciprocalBits = 14;
inline V ReciprocalEstimate(V d) { return _mm512_rcp14_ps(d); }

#include "simd/simd_common.inc"

}  // namespace opreg::kernels::cpu::avx512

OPREG_CPU_AVX512_END

#endif  // OPREG_CPU_HAVE_AVX512
