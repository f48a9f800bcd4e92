// Internal: AVX-512 building blocks for the fast paths of the row and elementwise kernels.
//
// The multiversioned loops (multiversion.h) leave vectorization to the compiler, and GCC cannot
// vectorize what the f16 kernels and the exp-bound kernels need most: f16 <-> f32 conversion in
// registers (it emits scalar vcvtph2ps; half_convert.h works around that with extra passes over
// L1 buffers, which cost as much as the memory traffic), and exp with the AVX-512 instructions
// cheap enough for memory speed. The kernels with a fast path here (add/mul/split_add on
// f16, rms_norm, fused_add_rms_norm_, silu_and_mul, per_token_quant int8, softmax over the last
// dim) call it when Supported() and keep their portable loops for every other CPU and compiler.
//
// Everything below OPREG_CPU_AVX512_BEGIN is compiled for AVX-512 (F, BW, DQ, VL) with FMA and
// F16C whatever the build's baseline, so it may only run after Supported() returned true. Code of
// a kernel's fast path goes between OPREG_CPU_AVX512_BEGIN and OPREG_CPU_AVX512_END in its .cc
// (a region, rather than per-function attributes, so that lambdas and template instances there
// are compiled for AVX-512 too), and is called from outside the region only through functions
// that are not inlined into baseline code.
//
// Results: the same roundings as the portable loops (f16 and bf16 round to nearest even, NaNs
// canonicalized as Half::FromFloat and BFloat16::FromFloat do; bf16 is rounded with integer
// arithmetic, not vcvtneps2bf16, which flushes subnormals). ExpNonPositive and Silu differ from
// the portable loops' ExpF and division in the last bits (see their comments).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>

#include "exp_poly.h"
#include "opreg/core/half.h"

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
// environment variable OPREG_CPU_NO_AVX512 is set to anything but "0" (the tests run the
// portable loops that way too). Read once per process; cheap and thread-safe.
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

// Stores f(j, k), the f32 values of out[j .. j + 16) for the lanes in k, for all of [0, n):
// f loads its inputs with the same mask. `stream`: the part of out aligned to 16 elements is
// written with non-temporal stores (the caller fences, see StreamFence in common.h); the
// unaligned head and the tail with ordinary masked stores.
template <class T, class F>
inline void StoreEach(T* out, int64_t n, bool stream, F&& f) {
  int64_t j = 0;
  constexpr uintptr_t kVecBytes = kLanes * sizeof(T);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
  if (stream && addr % sizeof(T) == 0) {
    const int64_t head = std::min<int64_t>(
        n, static_cast<int64_t>(((kVecBytes - addr % kVecBytes) % kVecBytes) / sizeof(T)));
    if (head > 0) {
      const Mask k = FirstLanes(head);
      Store(out, f(int64_t{0}, k), k);
    }
    for (j = head; j + kLanes <= n; j += kLanes) StreamStore(out + j, f(j, Mask(0xffff)));
  } else {
    for (; j + kLanes <= n; j += kLanes) Store(out + j, f(j, Mask(0xffff)), Mask(0xffff));
  }
  if (j < n) {
    const Mask k = FirstLanes(n - j);
    Store(out + j, f(j, k), k);
  }
}

// Sum over [0, n) of f(j, k) (lanes outside k must be 0, as masked loads give them), in four
// independent accumulators so the adds do not wait on each other.
template <class F>
inline float SumEach(int64_t n, F&& f) {
  V a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t j = 0;
  for (; j + 4 * kLanes <= n; j += 4 * kLanes) {
    a0 = _mm512_add_ps(a0, f(j, Mask(0xffff)));
    a1 = _mm512_add_ps(a1, f(j + kLanes, Mask(0xffff)));
    a2 = _mm512_add_ps(a2, f(j + 2 * kLanes, Mask(0xffff)));
    a3 = _mm512_add_ps(a3, f(j + 3 * kLanes, Mask(0xffff)));
  }
  for (; j < n; j += kLanes) a0 = _mm512_add_ps(a0, f(j, FirstLanes(n - j)));
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

// max(init, f(j, k) over [0, n)), lanes outside k ignored, in four accumulators. NaNs never win
// (vmaxps returns its second operand, the accumulator, when either is NaN), as in MaxOf
// (vec_math.h); callers whose results must show a NaN input get it through other paths.
template <class F>
inline float MaxEach(int64_t n, float init, F&& f) {
  V a0 = _mm512_set1_ps(init), a1 = a0, a2 = a0, a3 = a0;
  int64_t j = 0;
  for (; j + 4 * kLanes <= n; j += 4 * kLanes) {
    a0 = _mm512_max_ps(f(j, Mask(0xffff)), a0);
    a1 = _mm512_max_ps(f(j + kLanes, Mask(0xffff)), a1);
    a2 = _mm512_max_ps(f(j + 2 * kLanes, Mask(0xffff)), a2);
    a3 = _mm512_max_ps(f(j + 3 * kLanes, Mask(0xffff)), a3);
  }
  for (; j < n; j += kLanes) {
    const Mask k = FirstLanes(n - j);
    a0 = _mm512_mask_max_ps(a0, k, f(j, k), a0);
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a0, a1), _mm512_max_ps(a2, a3)));
}

// exp(r) ~ P(r) (exp_poly.h) for results rounded to T, or P(-q) when kNegated.
template <class T, bool kNegated = false>
inline V ExpPoly(V r) {
  constexpr size_t kTerms = std::size(exp_poly::Poly<T>());
  auto c = [](size_t i) {
    return kNegated ? exp_poly::NegatedCoefficient<T>(i) : exp_poly::Poly<T>()[i];
  };
  V y = _mm512_set1_ps(c(0));
  for (size_t i = 1; i < kTerms; ++i) y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(c(i)));
  return y;
}

// r = x - n ln2 (or -r = a + n ln2 for x = -a when kNegated), in two parts for f32 results.
template <class T, bool kNegated = false>
inline V ReduceLn2(V n, V x) {
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (kNegated) {
      return _mm512_fmadd_ps(n, _mm512_set1_ps(exp_poly::kLn2Lo),
                             _mm512_fmadd_ps(n, _mm512_set1_ps(exp_poly::kLn2Hi), x));
    } else {
      return _mm512_fnmadd_ps(n, _mm512_set1_ps(exp_poly::kLn2Lo),
                              _mm512_fnmadd_ps(n, _mm512_set1_ps(exp_poly::kLn2Hi), x));
    }
  } else {
    return kNegated ? _mm512_fmadd_ps(n, _mm512_set1_ps(exp_poly::kLn2), x)
                    : _mm512_fnmadd_ps(n, _mm512_set1_ps(exp_poly::kLn2), x);
  }
}

// 2^n from t = n + kRoundBias (exp_poly.h): shifting t's bits left by 23 drops its exponent and
// moves n + 127 into the exponent field.
inline V Pow2FromRounded(V t) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(t), 23));
}

// exp(x) for x <= 0 (and NaN: NaN), as softmax needs it (x - max), with exp_poly.h's reduction
// and polynomial for results rounded to T; results below 2^-126 (x < -87.34) are 0, so exp(-inf)
// = 0. Written without vrndscaleps and vscalefps: on AMD's AVX-512 they issue on the same pipes
// as the f16 conversions.
template <class T>
inline V ExpNonPositive(V x) {
  // Lanes of x below kMinArg are zeroed at the end; NaN lanes are kept (unordered: true).
  const Mask keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(exp_poly::kMinArg), _CMP_NLT_UQ);
  const V bias = _mm512_set1_ps(exp_poly::kRoundBias);
  const V t = _mm512_fmadd_ps(x, _mm512_set1_ps(exp_poly::kLog2e), bias);
  const V y = ExpPoly<T>(ReduceLn2<T>(_mm512_sub_ps(t, bias), x));
  return _mm512_maskz_mul_ps(keep, y, Pow2FromRounded(t));
}

// silu(a) = a / (1 + exp(-a)). exp(-a) as in ExpNonPositive but for any sign: a is clamped to
// >= -88.7 (n <= 128: exp(88.7) builds 2^128 = inf, as exp(-a) overflows for a below -88.72), and
// lanes with -a below kMinArg give 0. 1 / (1 + e) is vrcp14ps, plus a Newton step when T is float
// (relative error 2^-14, then below 2^-26). So silu(-inf) is NaN, as a / (1 + exp(-a)) gives (and
// torch), silu(+inf) = inf, and NaN stays NaN.
template <class T>
inline V Silu(V a) {
  // max(c, a) returns a when a is NaN (vmaxps returns its second operand for a NaN).
  const V ac = _mm512_max_ps(_mm512_set1_ps(-88.7f), a);
  const Mask keep = _mm512_cmp_ps_mask(ac, _mm512_set1_ps(-exp_poly::kMinArg), _CMP_NGT_UQ);
  const V bias = _mm512_set1_ps(exp_poly::kRoundBias);
  const V t = _mm512_fnmadd_ps(ac, _mm512_set1_ps(exp_poly::kLog2e), bias);
  const V y = ExpPoly<T, true>(ReduceLn2<T, true>(_mm512_sub_ps(t, bias), ac));
  const V d = _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_maskz_mul_ps(keep, y, Pow2FromRounded(t)));
  V rcp = _mm512_rcp14_ps(d);
  if constexpr (std::is_same_v<T, float>) {
    // The Newton step would turn 1 / inf = 0 into NaN (inf * 0); those lanes keep 0.
    const Mask finite =
        _mm512_cmp_ps_mask(d, _mm512_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
    rcp = _mm512_maskz_mul_ps(finite, rcp, _mm512_fnmadd_ps(d, rcp, _mm512_set1_ps(2.0f)));
  }
  return _mm512_mul_ps(a, rcp);
}

}  // namespace opreg::kernels::cpu::avx512

OPREG_CPU_AVX512_END

#endif  // OPREG_CPU_HAVE_AVX512
