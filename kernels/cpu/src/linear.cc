#include "opreg/kernels/cpu/linear.h"

#include <cblas.h>

#include <climits>
#include <vector>

#include "loops.h"

namespace opreg::kernels::cpu {
namespace {

// Per-thread f32 scratch, grown on demand and reused across calls.
float* Scratch(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

template <class T>
void ToFloat(const T* __restrict src, float* __restrict dst, int64_t n) {
#pragma omp parallel for simd if (n > detail::kParallelGrain) schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

// y[M, N] = x[M, K] @ w[N, K]^T (+ y when accumulate).
void Sgemm(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
           bool accumulate) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, x, static_cast<blasint>(k), w,
              static_cast<blasint>(k), accumulate ? 1.0f : 0.0f, y, static_cast<blasint>(n));
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
    if constexpr (std::is_same_v<T, float>) {
      if (has_bias) {
#pragma omp parallel for if (m * n > detail::kParallelGrain) schedule(static)
        for (int64_t r = 0; r < m; ++r) {
          float* __restrict row = po + r * n;
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) row[j] = pb[j];
        }
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
#pragma omp parallel for if (m * n > detail::kParallelGrain) schedule(static)
      for (int64_t r = 0; r < m; ++r) {
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
      }
    }
  });
}

}  // namespace opreg::kernels::cpu
