#include "opreg/kernels/cpu/rms_norm.h"

#include <algorithm>
#include <cmath>

#include "loops.h"
#include "half_convert.h"
#include "multiversion.h"
#include "simd/simd_rows.h"

namespace opreg::kernels::cpu {
namespace {

template <class T>
OPREG_CPU_MULTIVERSION void RmsNormRow(const T* __restrict x, const T* __restrict w,
                                       T* __restrict y, int64_t h, float eps, bool stream) {
  if constexpr (std::is_same_v<T, Half>) {
    // f16 rows too long for RmsNormRowHalf: convert blocks with F16C (see half_convert.h),
    // compute in f32.
    float fx[detail::kHalfBlock], fw[detail::kHalfBlock];
    float ss = 0.0f;
    for (int64_t j0 = 0; j0 < h; j0 += detail::kHalfBlock) {
      const int64_t m = std::min(detail::kHalfBlock, h - j0);
      detail::HalfToFloat(x + j0, fx, m);
#pragma omp simd reduction(+ : ss)
      for (int64_t j = 0; j < m; ++j) ss += fx[j] * fx[j];
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t j0 = 0; j0 < h; j0 += detail::kHalfBlock) {
      const int64_t m = std::min(detail::kHalfBlock, h - j0);
      detail::HalfToFloat(x + j0, fx, m);
      detail::HalfToFloat(w + j0, fw, m);
#pragma omp simd
      for (int64_t j = 0; j < m; ++j) fx[j] = fx[j] * inv * fw[j];
      detail::StoreHalf(fx, y + j0, m, stream);
    }
    return;
  }
  float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
  for (int64_t j = 0; j < h; ++j) {
    const float v = static_cast<float>(x[j]);
    ss += v * v;
  }
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
  if (h <= detail::kRowBuffer) detail::Prefetch(x + h, h * static_cast<int64_t>(sizeof(T)));
  detail::FillBlocks(y, h, stream, [&](T* __restrict o, int64_t j0, int64_t m) {
    const T* __restrict xb = x + j0;
    const T* __restrict wb = w + j0;
#pragma omp simd
    for (int64_t j = 0; j < m; ++j) {
      detail::Store(&o[j], static_cast<float>(xb[j]) * inv * static_cast<float>(wb[j]));
    }
  });
}

// f16 rows of at most kRowBuffer elements, with the weight already in f32: the row is converted
// once (F16C, see half_convert.h) and computed in f32.
OPREG_CPU_MULTIVERSION void RmsNormRowHalf(const Half* __restrict x, const float* __restrict w,
                                           Half* __restrict y, int64_t h, float eps, bool stream) {
  float f[detail::kRowBuffer];
  detail::HalfToFloat(x, f, h);
  detail::Prefetch(x + h, h * static_cast<int64_t>(sizeof(Half)));  // the next row
  float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
  for (int64_t j = 0; j < h; ++j) ss += f[j] * f[j];
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
#pragma omp simd
  for (int64_t j = 0; j < h; ++j) f[j] = f[j] * inv * w[j];
  detail::StoreHalf(f, y, h, stream);
}

}  // namespace

void RmsNormOut(const Tensor& input, const Tensor& weight, double eps, Tensor& out) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&input, &weight, &out}) {
    detail::RequireCpuContiguous("RmsNormOut", *t, "every tensor");
  }
  detail::DispatchFloating(input.dtype(), "RmsNormOut", [&](auto tag) {
    using T = decltype(tag);
    const int64_t h = input.size(-1), rows = detail::Rows(input);
    const T* in = input.data_ptr<T>();
    const T* w = weight.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const float feps = static_cast<float>(eps);
    const bool stream = detail::ShouldStream<T>(rows * h);
#if OPREG_CPU_HAVE_SIMD_ROWS
    auto run = [&](auto row) {
      detail::ParallelRows(rows, rows * h, stream,
                           [&](int64_t r) { row(in + r * h, w, o + r * h, h, feps, stream); });
    };
    if (detail::RunSimd(run, &avx512::RmsNormRow<T>, &avx2::RmsNormRow<T>)) return;
#endif
    if constexpr (std::is_same_v<T, Half>) {
      if (h <= detail::kRowBuffer) {
        if (!detail::UseTeam(rows * h, detail::kRowGrain)) {
          float wf[detail::kRowBuffer];
          detail::HalfToFloat(w, wf, h);
          for (int64_t r = 0; r < rows; ++r)
            RmsNormRowHalf(in + r * h, wf, o + r * h, h, feps, stream);
          if (stream) detail::StreamFence();
          return;
        }
#pragma omp parallel
        {
          float wf[detail::kRowBuffer];  // the weight in f32, converted once per thread
          detail::HalfToFloat(w, wf, h);
#pragma omp for schedule(static) nowait
          for (int64_t r = 0; r < rows; ++r)
            RmsNormRowHalf(in + r * h, wf, o + r * h, h, feps, stream);
          if (stream) detail::StreamFence();
        }
        return;
      }
    }
    detail::ParallelRows(rows, rows * h, stream, [&](int64_t r) {
      RmsNormRow<T>(in + r * h, w, o + r * h, h, feps, stream);
    });
  });
}

}  // namespace opreg::kernels::cpu
