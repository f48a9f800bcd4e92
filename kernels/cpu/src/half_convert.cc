#include "half_convert.h"

#include <cstdint>

#include "multiversion.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define OPREG_CPU_HAVE_F16C_PATH 1
#endif

namespace opreg::kernels::cpu::detail {
namespace {

// Portable fallbacks: Half's branch-free conversions, vectorized by the compiler.
OPREG_CPU_MULTIVERSION void HalfToFloatGeneric(const Half* __restrict in, float* __restrict out,
                                               int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

OPREG_CPU_MULTIVERSION void FloatToHalfGeneric(const float* __restrict in, Half* __restrict out,
                                               int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i].x = Half::FromFloat(in[i]);
}

using HalfToFloatFn = void (*)(const Half*, float*, int64_t);
using FloatToHalfFn = void (*)(const float*, Half*, int64_t);

#ifdef OPREG_CPU_HAVE_F16C_PATH

// vcvtph2ps quiets signaling NaNs (0x7c00 < |h| < 0x7e00), where Half's conversion keeps the
// bits as they are: a block with a NaN gets the float's quiet bit cleared again for those (rare,
// so checked per block of 8 instead of fixed up every time).
__attribute__((target("avx2,f16c"))) inline __m256 HalfToFloat8(__m128i h) {
  const __m256 f = _mm256_cvtph_ps(h);
  if (__builtin_expect(_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)) == 0, 1)) return f;
  const __m256i mag = _mm256_and_si256(_mm256_cvtepu16_epi32(h), _mm256_set1_epi32(0x7fff));
  const __m256i snan = _mm256_and_si256(_mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7c00)),
                                        _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7e00), mag));
  const __m256i quiet_bit = _mm256_and_si256(snan, _mm256_set1_epi32(0x00400000));
  return _mm256_castsi256_ps(_mm256_andnot_si256(quiet_bit, _mm256_castps_si256(f)));
}

// vcvtps2ph keeps the top payload bits of a NaN; Half::FromFloat gives every NaN the payload
// 0x200 (and its sign), which is what the float NaN 0x7fc00000 converts to.
__attribute__((target("avx2,f16c"))) inline __m128i FloatToHalf8(__m256 f) {
  const __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
  if (__builtin_expect(_mm256_movemask_ps(nan) != 0, 0)) {
    const __m256 canonical = _mm256_or_ps(_mm256_and_ps(f, _mm256_set1_ps(-0.0f)),
                                          _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
    f = _mm256_blendv_ps(f, canonical, nan);
  }
  return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

__attribute__((target("avx2,f16c"))) void HalfToFloatF16c(const Half* __restrict in,
                                                          float* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, HalfToFloat8(h));
  }
  for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

__attribute__((target("avx2,f16c"))) void FloatToHalfF16c(const float* __restrict in,
                                                          Half* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), FloatToHalf8(_mm256_loadu_ps(in + i)));
  }
  for (; i < n; ++i) out[i].x = Half::FromFloat(in[i]);
}

// The same with AVX-512 (16 lanes; the NaN checks use mask registers). The zero-masked forms
// of the conversions, with an all-ones mask, avoid GCC 12's false -Wmaybe-uninitialized on the
// unmasked ones (GCC bug 105593).
__attribute__((target("avx512f"))) void HalfToFloatAvx512(const Half* __restrict in,
                                                          float* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    __m512 f = _mm512_maskz_cvtph_ps(0xffff, h);
    const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    if (__builtin_expect(nan != 0, 0)) {
      const __m512i mag =
          _mm512_and_si512(_mm512_maskz_cvtepu16_epi32(0xffff, h), _mm512_set1_epi32(0x7fff));
      const __mmask16 snan = _mm512_cmplt_epi32_mask(mag, _mm512_set1_epi32(0x7e00)) & nan;
      f = _mm512_castsi512_ps(_mm512_mask_andnot_epi32(
          _mm512_castps_si512(f), snan, _mm512_set1_epi32(0x00400000), _mm512_castps_si512(f)));
    }
    _mm512_storeu_ps(out + i, f);
  }
  HalfToFloatF16c(in + i, out + i, n - i);
}

__attribute__((target("avx512f"))) void FloatToHalfAvx512(const float* __restrict in,
                                                          Half* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 f = _mm512_loadu_ps(in + i);
    const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    if (__builtin_expect(nan != 0, 0)) {
      const __m512i sign = _mm512_and_si512(_mm512_castps_si512(f), _mm512_set1_epi32(INT32_MIN));
      const __m512i canonical = _mm512_or_si512(sign, _mm512_set1_epi32(0x7fc00000));
      f = _mm512_mask_mov_ps(f, nan, _mm512_castsi512_ps(canonical));
    }
    const __m256i h =
        _mm512_maskz_cvtps_ph(0xffff, f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
  FloatToHalfF16c(in + i, out + i, n - i);
}

bool HaveAvx512() { return CpuHasF16c() && __builtin_cpu_supports("avx512f"); }

// F16C needs AVX for its ymm form, and the NaN fix-ups above need AVX2.
HalfToFloatFn ChooseHalfToFloat() {
  return HaveAvx512() ? HalfToFloatAvx512 : (CpuHasF16c() ? HalfToFloatF16c : HalfToFloatGeneric);
}
FloatToHalfFn ChooseFloatToHalf() {
  return HaveAvx512() ? FloatToHalfAvx512 : (CpuHasF16c() ? FloatToHalfF16c : FloatToHalfGeneric);
}

#else

HalfToFloatFn ChooseHalfToFloat() { return HalfToFloatGeneric; }
FloatToHalfFn ChooseFloatToHalf() { return FloatToHalfGeneric; }

#endif  // OPREG_CPU_HAVE_F16C_PATH

}  // namespace

bool CpuHasF16c() {
#ifdef OPREG_CPU_HAVE_F16C_PATH
  __builtin_cpu_init();  // Idempotent; needed if this runs before libgcc's own initializer.
  // __builtin_cpu_supports knows "avx2" (which also checks that the OS saves ymm state), but not
  // "f16c" on every compiler: read that from CPUID leaf 1 (ECX bit 29).
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  return f16c && __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

// Chosen on the first call (function-local statics: safe whatever the order of static
// initialization), once per process.
void HalfToFloat(const Half* in, float* out, int64_t n) {
  static const HalfToFloatFn fn = ChooseHalfToFloat();
  fn(in, out, n);
}

void FloatToHalf(const float* in, Half* out, int64_t n) {
  static const FloatToHalfFn fn = ChooseFloatToHalf();
  fn(in, out, n);
}

}  // namespace opreg::kernels::cpu::detail
