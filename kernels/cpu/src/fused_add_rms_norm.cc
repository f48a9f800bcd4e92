#include "opreg/kernels/cpu/fused_add_rms_norm.h"

#include <cmath>

#include "common.h"

namespace opreg::kernels::cpu {

void FusedAddRmsNormCpu(Tensor& input, Tensor& residual, const Tensor& weight, double eps) {
  detail::RequireCpuContiguous("FusedAddRmsNormCpu", input, "input");
  detail::RequireCpuContiguous("FusedAddRmsNormCpu", residual, "residual");
  detail::RequireCpuContiguous("FusedAddRmsNormCpu", weight, "weight");
  detail::DispatchFloating(input.dtype(), "FusedAddRmsNormCpu", [&](auto tag) {
    using T = decltype(tag);
    const int64_t h = input.size(-1), rows = detail::Rows(input);
    T* __restrict in = input.data_ptr<T>();
    T* __restrict res = residual.data_ptr<T>();
    const T* __restrict w = weight.data_ptr<T>();
    const float feps = static_cast<float>(eps);
#pragma omp parallel for if (rows * h > detail::kParallelGrain) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      T* __restrict x = in + r * h;
      T* __restrict z = res + r * h;
      float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
      for (int64_t j = 0; j < h; ++j) {
        // vLLM: the sum is rounded to the dtype, stored, and normalized as stored.
        const float v = detail::RoundTo<T>(static_cast<float>(x[j]) + static_cast<float>(z[j]));
        detail::Store(&z[j], v);
        ss += v * v;
      }
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + feps);
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) {
        detail::Store(&x[j], static_cast<float>(z[j]) * inv * static_cast<float>(w[j]));
      }
    }
  });
}

}  // namespace opreg::kernels::cpu
