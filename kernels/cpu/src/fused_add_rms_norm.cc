#include "opreg/kernels/cpu/fused_add_rms_norm.h"

#include <algorithm>
#include <cmath>

#include "loops.h"
#include "half_convert.h"
#include "multiversion.h"
#include "simd/simd_rows.h"

namespace opreg::kernels::cpu {
namespace {

template <class T>
OPREG_CPU_MULTIVERSION void FusedAddRmsNormRow(T* __restrict x, T* __restrict z,
                                               const T* __restrict w, int64_t h, float eps) {
  if constexpr (std::is_same_v<T, Half>) {
    // f16 rows too long for FusedAddRmsNormRowHalf: convert blocks with F16C (see
    // half_convert.h), compute in f32. The sum is rounded by storing it and read back as stored.
    float fx[detail::kHalfBlock], fz[detail::kHalfBlock];
    float ss = 0.0f;
    for (int64_t j0 = 0; j0 < h; j0 += detail::kHalfBlock) {
      const int64_t m = std::min(detail::kHalfBlock, h - j0);
      detail::HalfToFloat(x + j0, fx, m);
      detail::HalfToFloat(z + j0, fz, m);
#pragma omp simd
      for (int64_t j = 0; j < m; ++j) fx[j] += fz[j];
      detail::FloatToHalf(fx, z + j0, m);
      detail::HalfToFloat(z + j0, fz, m);
#pragma omp simd reduction(+ : ss)
      for (int64_t j = 0; j < m; ++j) ss += fz[j] * fz[j];
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t j0 = 0; j0 < h; j0 += detail::kHalfBlock) {
      const int64_t m = std::min(detail::kHalfBlock, h - j0);
      detail::HalfToFloat(z + j0, fz, m);
      detail::HalfToFloat(w + j0, fx, m);
#pragma omp simd
      for (int64_t j = 0; j < m; ++j) fz[j] = fz[j] * inv * fx[j];
      detail::FloatToHalf(fz, x + j0, m);
    }
    return;
  }
  float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
  for (int64_t j = 0; j < h; ++j) {
    // vLLM: the sum is rounded to the dtype, stored, and normalized as stored.
    const float sum = static_cast<float>(x[j]) + static_cast<float>(z[j]);
    const float v = detail::StoreRounded(&z[j], sum);
    ss += v * v;
  }
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
  if (h <= detail::kRowBuffer) {  // the next rows, read while this one is written
    detail::Prefetch(x + h, h * static_cast<int64_t>(sizeof(T)));
    detail::Prefetch(z + h, h * static_cast<int64_t>(sizeof(T)));
  }
#pragma omp simd
  for (int64_t j = 0; j < h; ++j) {
    detail::Store(&x[j], static_cast<float>(z[j]) * inv * static_cast<float>(w[j]));
  }
}

// f16 rows of at most kRowBuffer elements, with the weight already in f32: each row is converted
// once (F16C, see half_convert.h) and computed in f32; the sum is rounded by storing it and read
// back as stored.
OPREG_CPU_MULTIVERSION void FusedAddRmsNormRowHalf(Half* __restrict x, Half* __restrict z,
                                                   const float* __restrict w, int64_t h,
                                                   float eps) {
  float fx[detail::kRowBuffer], fz[detail::kRowBuffer];
  detail::HalfToFloat(x, fx, h);
  detail::HalfToFloat(z, fz, h);
  // The next rows, read while this one is computed and written.
  detail::Prefetch(x + h, h * static_cast<int64_t>(sizeof(Half)));
  detail::Prefetch(z + h, h * static_cast<int64_t>(sizeof(Half)));
#pragma omp simd
  for (int64_t j = 0; j < h; ++j) fx[j] += fz[j];
  detail::FloatToHalf(fx, z, h);
  detail::HalfToFloat(z, fz, h);
  float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
  for (int64_t j = 0; j < h; ++j) ss += fz[j] * fz[j];
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
#pragma omp simd
  for (int64_t j = 0; j < h; ++j) fz[j] = fz[j] * inv * w[j];
  detail::FloatToHalf(fz, x, h);
}

}  // namespace

void FusedAddRmsNormInplace(Tensor& input, Tensor& residual, const Tensor& weight, double eps) {
  detail::RequireCpuContiguous("FusedAddRmsNormInplace", input, "input");
  detail::RequireCpuContiguous("FusedAddRmsNormInplace", residual, "residual");
  detail::RequireCpuContiguous("FusedAddRmsNormInplace", weight, "weight");
  detail::DispatchFloating(input.dtype(), "FusedAddRmsNormInplace", [&](auto tag) {
    using T = decltype(tag);
    const int64_t h = input.size(-1), rows = detail::Rows(input);
    T* in = input.data_ptr<T>();
    T* res = residual.data_ptr<T>();
    const T* w = weight.data_ptr<T>();
    const float feps = static_cast<float>(eps);
#if OPREG_CPU_HAVE_SIMD_ROWS
    auto run = [&](auto row) {
      detail::ParallelRows(rows, rows * h, false,
                           [&](int64_t r) { row(in + r * h, res + r * h, w, h, feps); });
    };
    if (detail::RunSimd(run, &avx512::FusedAddRmsNormRow<T>, &avx2::FusedAddRmsNormRow<T>)) {
      return;
    }
#endif
    if constexpr (std::is_same_v<T, Half>) {
      if (h <= detail::kRowBuffer) {
        if (!detail::UseTeam(rows * h, detail::kRowGrain)) {
          float wf[detail::kRowBuffer];
          detail::HalfToFloat(w, wf, h);
          for (int64_t r = 0; r < rows; ++r) {
            FusedAddRmsNormRowHalf(in + r * h, res + r * h, wf, h, feps);
          }
          return;
        }
#pragma omp parallel
        {
          float wf[detail::kRowBuffer];  // the weight in f32, converted once per thread
          detail::HalfToFloat(w, wf, h);
#pragma omp for schedule(static)
          for (int64_t r = 0; r < rows; ++r) {
            FusedAddRmsNormRowHalf(in + r * h, res + r * h, wf, h, feps);
          }
        }
        return;
      }
    }
    detail::ParallelFor(
        rows, rows * h,
        [&](int64_t r) { FusedAddRmsNormRow<T>(in + r * h, res + r * h, w, h, feps); },
        detail::kRowGrain);
  });
}

}  // namespace opreg::kernels::cpu
