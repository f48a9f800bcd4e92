#include "opreg/kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "common.h"
#include "half_convert.h"
#include "multiversion.h"
#include "vec_math.h"

namespace opreg::kernels::cpu {
namespace {

// dst = softmax(src) over n floats, max-subtracted, accumulated in f32; dst may be src. exp is
// stored once in dst and rescaled in place (the row is still in cache). A NaN anywhere makes the
// sum, and so every output, NaN (as torch); the max need not see it.
OPREG_CPU_ALWAYS_INLINE void SoftmaxF32(const float* src, float* dst, int64_t n) {
  const float m = detail::MaxOf(src, n, -std::numeric_limits<float>::infinity(),
                                [](float v) { return v; });
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) {
    const float e = detail::ExpF(src[j] - m);
    dst[j] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) dst[j] *= inv;
}

// Softmax of one contiguous row.
template <class T>
OPREG_CPU_MULTIVERSION void SoftmaxRow(const T* __restrict x, T* __restrict y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    SoftmaxF32(x, y, n);
  } else if (n <= detail::kRowBuffer) {
    // 16-bit rows are converted into an f32 buffer and computed there: outputs are rounded
    // once, and exp runs once. Longer rows compute exp twice instead.
    float e[detail::kRowBuffer];
    if constexpr (std::is_same_v<T, Half>) {
      detail::HalfToFloat(x, e, n);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) e[j] = static_cast<float>(x[j]);
    }
    SoftmaxF32(e, e, n);
    if constexpr (std::is_same_v<T, Half>) {
      detail::FloatToHalf(e, y, n);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) detail::Store(&y[j], e[j]);
    }
  } else {
    const float m = detail::MaxOf(x, n, -std::numeric_limits<float>::infinity(),
                                  [](float v) { return v; });
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += detail::ExpF(static_cast<float>(x[j]) - m);
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      detail::Store(&y[j], detail::ExpF(static_cast<float>(x[j]) - m) * inv);
  }
}

// Softmax of n elements at stride `st` (dim not the last); exp recomputed instead of buffered
// so 16-bit outputs do not round intermediate values.
template <class T>
void SoftmaxStrided(const T* x, T* y, int64_t n, int64_t st) {
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) {
    const float v = static_cast<float>(x[j * st]);
    nan |= std::isnan(v);
    m = std::max(m, v);
  }
  if (nan) m = std::numeric_limits<float>::quiet_NaN();
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) sum += detail::ExpF(static_cast<float>(x[j * st]) - m);
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) {
    detail::Store(&y[j * st], detail::ExpF(static_cast<float>(x[j * st]) - m) * inv);
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
      if (inner == 1) {
        SoftmaxRow<T>(in + base, o + base, n);
      } else {
        SoftmaxStrided<T>(in + base, o + base, n, inner);
      }
    }
  });
}

}  // namespace opreg::kernels::cpu
