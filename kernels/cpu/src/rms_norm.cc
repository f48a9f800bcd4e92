#include "opreg/kernels/cpu/rms_norm.h"

#include <cmath>

#include "common.h"

namespace opreg::kernels::cpu {

void RmsNormCpu(const Tensor& input, const Tensor& weight, double eps, Tensor& out) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&input, &weight, &out}) {
    detail::RequireCpuContiguous("RmsNormCpu", *t, "every tensor");
  }
  detail::DispatchFloating(input.dtype(), "RmsNormCpu", [&](auto tag) {
    using T = decltype(tag);
    const int64_t h = input.size(-1), rows = detail::Rows(input);
    const T* __restrict in = input.data_ptr<T>();
    const T* __restrict w = weight.data_ptr<T>();
    T* __restrict o = out.data_ptr<T>();
    const float feps = static_cast<float>(eps);
#pragma omp parallel for if (rows * h > detail::kParallelGrain) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* __restrict x = in + r * h;
      T* __restrict y = o + r * h;
      float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
      for (int64_t j = 0; j < h; ++j) {
        const float v = static_cast<float>(x[j]);
        ss += v * v;
      }
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + feps);
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) {
        detail::Store(&y[j], static_cast<float>(x[j]) * inv * static_cast<float>(w[j]));
      }
    }
  });
}

}  // namespace opreg::kernels::cpu
