#include "opreg/kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "loops.h"
#include "half_convert.h"
#include "multiversion.h"
#include "simd/simd_rows.h"
#include "vec_math.h"

namespace opreg::kernels::cpu {
namespace {

// dst = softmax(src) over n floats, max-subtracted, accumulated in f32; dst may be src. exp is
// stored once in dst and rescaled in place (the row is still in cache). A NaN anywhere makes the
// sum, and so every output, NaN (as torch); the max need not see it. `next`: bytes to prefetch
// after the max pass (the next row; null: none).
OPREG_CPU_ALWAYS_INLINE void SoftmaxF32(const float* src, float* dst, int64_t n,
                                        const void* next = nullptr, int64_t next_bytes = 0) {
  const float m =
      detail::MaxOf(src, n, -std::numeric_limits<float>::infinity(), [](float v) { return v; });
  if (next != nullptr) detail::Prefetch(next, next_bytes);
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
OPREG_CPU_MULTIVERSION void SoftmaxRow(const T* __restrict x, T* __restrict y, int64_t n,
                                       bool stream) {
  if constexpr (std::is_same_v<T, float>) {
    if (stream && n <= detail::kRowBuffer) {
      float e[detail::kRowBuffer];
      SoftmaxF32(x, e, n, x + n, n * static_cast<int64_t>(sizeof(float)));
      detail::StreamCopy(y, e, n * static_cast<int64_t>(sizeof(float)));
    } else {
      SoftmaxF32(x, y, n);
    }
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
    detail::Prefetch(x + n, n * static_cast<int64_t>(sizeof(T)));  // the next row
    SoftmaxF32(e, e, n);
    // Streamed: converted into a row buffer, then copied out (see kStreamBytes).
    detail::Buffer<T, detail::kRowBuffer> buf_storage;
    T* buf = buf_storage.get();
    T* __restrict o = stream ? buf : y;
    if constexpr (std::is_same_v<T, Half>) {
      detail::FloatToHalf(e, o, n);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) detail::Store(&o[j], e[j]);
    }
    if (stream) detail::StreamCopy(y, buf, n * static_cast<int64_t>(sizeof(T)));
  } else {
    const float m =
        detail::MaxOf(x, n, -std::numeric_limits<float>::infinity(), [](float v) { return v; });
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

void SoftmaxOut(const Tensor& x, int64_t dim, Tensor& out) {
  detail::RequireCpuContiguous("SoftmaxOut", x, "x");
  detail::RequireCpuContiguous("SoftmaxOut", out, "out");
  if (x.numel() == 0) return;
  detail::DispatchFloating(x.dtype(), "SoftmaxOut", [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    const int64_t slices = outer * inner;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const bool stream = detail::ShouldStream<T>(x.numel());
#if OPREG_CPU_HAVE_SIMD_ROWS
    auto run = [&](auto row) {
      detail::ParallelRows(slices, slices * n, stream,
                           [&](int64_t s) { row(in + s * n, o + s * n, n, stream); });
    };
    if (inner == 1 && detail::RunSimd(run, &avx512::SoftmaxRow<T>, &avx2::SoftmaxRow<T>)) return;
#endif
    detail::ParallelRows(slices, slices * n, stream, [&](int64_t s) {
      const int64_t oi = s / inner, ii = s % inner;
      const int64_t base = oi * n * inner + ii;
      if (inner == 1) {
        SoftmaxRow<T>(in + base, o + base, n, stream);
      } else {
        SoftmaxStrided<T>(in + base, o + base, n, inner);
      }
    });
  });
}

}  // namespace opreg::kernels::cpu
