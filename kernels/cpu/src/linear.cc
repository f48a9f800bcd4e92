#include "opreg/kernels/cpu/linear.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "loops.h"
#include "multiversion.h"
#include "simd/avx512.h"

namespace opreg::kernels::cpu {
namespace {

// Per-thread f32 scratch, grown on demand and reused across calls.
float* Scratch(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

template <class T>
void ToFloat(const T* __restrict src, float* __restrict dst, int64_t n) {
  detail::ParallelChunks(n, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<float>(src[i]);
  });
}

// y[M, N] = x[M, K] @ w[N, K]^T (+ y when accumulate).
void Sgemm(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
           bool accumulate) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, x, static_cast<blasint>(k), w,
              static_cast<blasint>(k), accumulate ? 1.0f : 0.0f, y, static_cast<blasint>(n));
}

// Decode-size products take SkinnyLinear up to these row counts (bench_kernels' decode table,
// k = n = 4096, 2-core AVX-512 VM: for f32 it beats OpenBLAS's sgemm up to 8 rows; for f16/bf16
// the general path first converts the whole weight to f32, so the skinny path wins further).
inline constexpr int64_t kSkinnyRowsF32 = 8;
inline constexpr int64_t kSkinnyRowsHalf = 64;
// Rows computed together per pass over a weight row (M x 16 accumulators in registers).
inline constexpr int64_t kSkinnyGroup = 8;

// Columns [j0, j1) of y = x @ w^T (+ bias) for M rows of x (already in f32): one pass over each
// weight row, converted on the fly, for all M rows, with M x kLanes partial sums in registers.
// Compiled per ISA (multiversion.h; the baseline is SSE2).
template <int64_t M, class T>
OPREG_CPU_MULTIVERSION void SkinnyColumns(const float* __restrict fx, const T* __restrict w,
                                          const T* bias, T* __restrict y, int64_t n, int64_t k,
                                          int64_t j0, int64_t j1) {
  constexpr int64_t kLanes = 16;
  const int64_t k_main = k / kLanes * kLanes;
  for (int64_t j = j0; j < j1; ++j) {
    const T* __restrict wr = w + j * k;
    float acc[M][kLanes] = {};
    for (int64_t i = 0; i < k_main; i += kLanes) {
      float wv[kLanes];
#pragma omp simd
      for (int64_t l = 0; l < kLanes; ++l) wv[l] = static_cast<float>(wr[i + l]);
      for (int64_t r = 0; r < M; ++r) {
        const float* __restrict xr = fx + r * k + i;
#pragma omp simd
        for (int64_t l = 0; l < kLanes; ++l) acc[r][l] += xr[l] * wv[l];
      }
    }
    const float b = bias != nullptr ? static_cast<float>(bias[j]) : 0.0f;
    for (int64_t r = 0; r < M; ++r) {
      float sum = b;
      for (int64_t l = 0; l < kLanes; ++l) sum += acc[r][l];
      for (int64_t i = k_main; i < k; ++i) sum += fx[r * k + i] * static_cast<float>(wr[i]);
      detail::Store(&y[r * n + j], sum);
    }
  }
}

// One group of m <= kSkinnyGroup rows: the matching instantiation.
template <class T>
void SkinnyGroup(const float* fx, const T* w, const T* bias, T* y, int64_t m, int64_t n,
                 int64_t k, int64_t j0, int64_t j1) {
  static_assert(kSkinnyGroup == 8, "one case per row count");
  switch (m) {
    case 1: return SkinnyColumns<1>(fx, w, bias, y, n, k, j0, j1);
    case 2: return SkinnyColumns<2>(fx, w, bias, y, n, k, j0, j1);
    case 3: return SkinnyColumns<3>(fx, w, bias, y, n, k, j0, j1);
    case 4: return SkinnyColumns<4>(fx, w, bias, y, n, k, j0, j1);
    case 5: return SkinnyColumns<5>(fx, w, bias, y, n, k, j0, j1);
    case 6: return SkinnyColumns<6>(fx, w, bias, y, n, k, j0, j1);
    case 7: return SkinnyColumns<7>(fx, w, bias, y, n, k, j0, j1);
    default: return SkinnyColumns<8>(fx, w, bias, y, n, k, j0, j1);
  }
}

// y[m, n] = x[m, k] @ w[n, k]^T (+ bias) for few rows (decode): x in f32 once, then, per block
// of output columns, every group of up to 8 rows, in parallel over blocks. The block's weight
// rows stay in L2 across the groups, so the weight is read from memory once whatever m is; the
// general path instead converts a 16-bit weight to f32 in full (n * k floats written, then read
// again by sgemm), and OpenBLAS's sgemm stays well below memory bandwidth for so few rows.
template <class T>
void SkinnyLinear(const T* x, const T* w, const T* bias, T* y, int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kBlock = 64;  // columns per task: 512 KiB of bf16 weight at k = 4096
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#if OPREG_CPU_HAVE_AVX512
  if constexpr (std::is_same_v<T, BFloat16>) {
    // bf16 pairs straight into vdpbf16ps: x stays bf16, nothing is converted.
    if (avx512::HasBFloat16Instructions()) {
      detail::ParallelFor(blocks, m * n * k, [&](int64_t blk) {
        const int64_t j0 = blk * kBlock, j1 = std::min(n, j0 + kBlock);
        for (int64_t r = 0; r < m; r += kSkinnyGroup) {
          avx512::SkinnyColumnsBf16Dot(x + r * k, w, bias, y + r * n,
                                       std::min(kSkinnyGroup, m - r), n, k, j0, j1);
        }
      });
      return;
    }
  }
#endif
  thread_local std::vector<float> xs;
  float* fx = Scratch(xs, m * k);
  for (int64_t i = 0; i < m * k; ++i) fx[i] = static_cast<float>(x[i]);
  detail::ParallelFor(blocks, m * n * k, [&](int64_t blk) {
    const int64_t j0 = blk * kBlock, j1 = std::min(n, j0 + kBlock);
    for (int64_t r = 0; r < m; r += kSkinnyGroup) {
      SkinnyGroup(fx + r * k, w, bias, y + r * n, std::min(kSkinnyGroup, m - r), n, k, j0, j1);
    }
  });
}

}  // namespace

void LinearOut(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& out) {
  detail::RequireCpuContiguous("LinearOut", x, "x");
  detail::RequireCpuContiguous("LinearOut", weight, "weight");
  detail::RequireCpuContiguous("LinearOut", out, "out");
  const bool has_bias = bias.defined();
  if (has_bias) detail::RequireCpuContiguous("LinearOut", bias, "bias");
  const int64_t k = x.size(-1), n = weight.size(0);
  int64_t m = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) m *= x.size(d);
  if (m == 0 || n == 0) return;
  OPREG_CHECK_VALUE(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && m * n <= INT64_MAX / 4,
                    "LinearOut: matrix dimensions exceed the BLAS integer range");
  detail::DispatchFloating(x.dtype(), "LinearOut", [&](auto tag) {
    using T = decltype(tag);
    const T* pb = has_bias ? bias.data_ptr<T>() : nullptr;
    T* po = out.data_ptr<T>();
    if (m <= (std::is_same_v<T, float> ? kSkinnyRowsF32 : kSkinnyRowsHalf)) {
      SkinnyLinear(x.data_ptr<T>(), weight.data_ptr<T>(), pb, po, m, n, k);
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (has_bias) {
        detail::ParallelFor(m, m * n, [&](int64_t r) {
          float* __restrict row = po + r * n;
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) row[j] = pb[j];
        });
      }
      if (k > 0) {
        Sgemm(x.data_ptr<float>(), weight.data_ptr<float>(), po, m, n, k, has_bias);
      } else if (!has_bias) {
        for (int64_t i = 0; i < m * n; ++i) po[i] = 0.0f;
      }
    } else {
      thread_local std::vector<float> xs, ws, ys;
      float* fx = Scratch(xs, m * k);
      float* fw = Scratch(ws, n * k);
      float* fy = Scratch(ys, m * n);
      ToFloat(x.data_ptr<T>(), fx, m * k);
      ToFloat(weight.data_ptr<T>(), fw, n * k);
      if (k > 0) {
        Sgemm(fx, fw, fy, m, n, k, false);
      } else {
        for (int64_t i = 0; i < m * n; ++i) fy[i] = 0.0f;
      }
      detail::ParallelFor(m, m * n, [&](int64_t r) {
        const float* __restrict src = fy + r * n;
        T* __restrict dst = po + r * n;
        if (pb != nullptr) {
#pragma omp simd
          for (int64_t j = 0; j < n; ++j)
            detail::Store(&dst[j], src[j] + static_cast<float>(pb[j]));
        } else {
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) detail::Store(&dst[j], src[j]);
        }
      });
    }
  });
}

}  // namespace opreg::kernels::cpu
