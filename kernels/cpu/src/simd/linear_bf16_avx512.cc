// linear's decode path for bf16 on CPUs with AVX512_BF16: vdpbf16ps multiplies bf16 pairs
// exactly and accumulates them in f32, 32 products per instruction, with no conversion of the
// weight to f32 (what the portable path does per element). Called only when
// avx512::HasBFloat16Instructions(); nothing where the AVX-512 paths are not built.
#include <cstdint>

#include "opreg/core/half.h"
#include "simd/avx512.h"

#if OPREG_CPU_HAVE_AVX512
OPREG_CPU_AVX512_BEGIN
namespace opreg::kernels::cpu::avx512 {
namespace {

// C adjacent columns j..j+C-1 for M rows: each x load feeds C dot products, so the loads per
// vdpbf16ps fall from (M + 1) / M to (M + C) / (M * C); C * M accumulators stay in registers.
template <int M, int C>
void DotColumnGroup(const BFloat16* x, const BFloat16* w, const BFloat16* bias, BFloat16* y,
                    int64_t n, int64_t k, int64_t j) {
  const int64_t k_main = k / 32 * 32;
  const __mmask32 tail = static_cast<__mmask32>((uint64_t{1} << (k - k_main)) - 1);
  __m512 acc[C][M];
  for (int c = 0; c < C; ++c) {
    for (int r = 0; r < M; ++r) acc[c][r] = _mm512_setzero_ps();
  }
  auto step = [&](int64_t i, __mmask32 mask) {
    __m512bh wv[C];
    for (int c = 0; c < C; ++c) {
      wv[c] = reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi16(mask, w + (j + c) * k + i));
    }
    for (int r = 0; r < M; ++r) {
      const __m512bh xv = reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi16(mask, x + r * k + i));
      for (int c = 0; c < C; ++c) acc[c][r] = _mm512_dpbf16_ps(acc[c][r], xv, wv[c]);
    }
  };
  for (int64_t i = 0; i < k_main; i += 32) step(i, ~__mmask32{0});
  if (k_main < k) step(k_main, tail);  // masked-off lanes load as +0, which adds nothing
  for (int c = 0; c < C; ++c) {
    const float b = bias != nullptr ? static_cast<float>(bias[j + c]) : 0.0f;
    for (int r = 0; r < M; ++r) {
      y[r * n + j + c] = BFloat16(_mm512_reduce_add_ps(acc[c][r]) + b);
    }
  }
}

template <int M>
void DotColumns(const BFloat16* x, const BFloat16* w, const BFloat16* bias, BFloat16* y,
                int64_t n, int64_t k, int64_t j0, int64_t j1) {
  constexpr int kCols = M <= 4 ? 4 : 2;  // at most 16 accumulators of the 32 zmm registers
  int64_t j = j0;
  for (; j + kCols <= j1; j += kCols) DotColumnGroup<M, kCols>(x, w, bias, y, n, k, j);
  for (; j < j1; ++j) DotColumnGroup<M, 1>(x, w, bias, y, n, k, j);
}

}  // namespace

void SkinnyColumnsBf16Dot(const BFloat16* x, const BFloat16* w, const BFloat16* bias,
                          BFloat16* y, int64_t m, int64_t n, int64_t k, int64_t j0, int64_t j1) {
  switch (m) {
    case 1: return DotColumns<1>(x, w, bias, y, n, k, j0, j1);
    case 2: return DotColumns<2>(x, w, bias, y, n, k, j0, j1);
    case 3: return DotColumns<3>(x, w, bias, y, n, k, j0, j1);
    case 4: return DotColumns<4>(x, w, bias, y, n, k, j0, j1);
    case 5: return DotColumns<5>(x, w, bias, y, n, k, j0, j1);
    case 6: return DotColumns<6>(x, w, bias, y, n, k, j0, j1);
    case 7: return DotColumns<7>(x, w, bias, y, n, k, j0, j1);
    default: return DotColumns<8>(x, w, bias, y, n, k, j0, j1);
  }
}

}  // namespace opreg::kernels::cpu::avx512
OPREG_CPU_AVX512_END
#endif
