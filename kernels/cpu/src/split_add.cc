#include "opreg/kernels/cpu/split_add.h"

#include "common.h"

namespace opreg::kernels::cpu {

void SplitAddCpu(const Tensor& x, const Tensor& y, Tensor& sum, Tensor& diff) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &y, &sum, &diff}) {
    detail::RequireCpuContiguous("SplitAddCpu", *t, "every tensor");
  }
  detail::DispatchFloating(x.dtype(), "SplitAddCpu", [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = x.numel();
    const T* __restrict px = x.data_ptr<T>();
    const T* __restrict py = y.data_ptr<T>();
    T* __restrict ps = sum.data_ptr<T>();
    T* __restrict pd = diff.data_ptr<T>();
#pragma omp parallel for simd if (n > detail::kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const float a = static_cast<float>(px[i]), b = static_cast<float>(py[i]);
      detail::Store(&ps[i], a + b);
      detail::Store(&pd[i], a - b);
    }
  });
}

}  // namespace opreg::kernels::cpu
