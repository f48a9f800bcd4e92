#include "opreg/kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common.h"
#include "vec_math.h"

namespace opreg::kernels::cpu {
namespace {

// Softmax of n elements at stride `st` (max-subtracted; exp recomputed instead of buffered so
// 16-bit outputs do not round intermediate values).
template <class T>
inline void SoftmaxSlice(const T* __restrict x, T* __restrict y, int64_t n, int64_t st) {
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) {
    const float v = static_cast<float>(x[j * st]);
    nan |= std::isnan(v);
    m = std::max(m, v);
  }
  if (nan) m = std::numeric_limits<float>::quiet_NaN();
  float sum = 0.0f;
  if (st == 1) {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += detail::ExpF(static_cast<float>(x[j]) - m);
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      detail::Store(&y[j], detail::ExpF(static_cast<float>(x[j]) - m) * inv);
  } else {
    for (int64_t j = 0; j < n; ++j) sum += detail::ExpF(static_cast<float>(x[j * st]) - m);
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < n; ++j) {
      detail::Store(&y[j * st], detail::ExpF(static_cast<float>(x[j * st]) - m) * inv);
    }
  }
}

}  // namespace

void SoftmaxCpu(const Tensor& x, int64_t dim, Tensor& out) {
  detail::RequireCpuContiguous("SoftmaxCpu", x, "x");
  detail::RequireCpuContiguous("SoftmaxCpu", out, "out");
  if (x.numel() == 0) return;
  detail::DispatchFloating(x.dtype(), "SoftmaxCpu", [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    const int64_t slices = outer * inner;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
#pragma omp parallel for if (slices * n > detail::kParallelGrain) schedule(static)
    for (int64_t s = 0; s < slices; ++s) {
      const int64_t oi = s / inner, ii = s % inner;
      const int64_t base = oi * n * inner + ii;
      SoftmaxSlice<T>(in + base, o + base, n, inner);
    }
  });
}

}  // namespace opreg::kernels::cpu
