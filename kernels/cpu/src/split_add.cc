#include "opreg/kernels/cpu/split_add.h"

#include <algorithm>

#include "common.h"
#include "half_convert.h"
#include "multiversion.h"

namespace opreg::kernels::cpu {
namespace {

template <class T>
OPREG_CPU_MULTIVERSION void SplitAddChunk(const T* __restrict px, const T* __restrict py,
                                          T* __restrict ps, T* __restrict pd, int64_t n) {
  if constexpr (std::is_same_v<T, Half>) {
    // f16: convert blocks with F16C (see half_convert.h), compute in f32.
    float fx[detail::kHalfBlock], fy[detail::kHalfBlock];
    for (int64_t i0 = 0; i0 < n; i0 += detail::kHalfBlock) {
      const int64_t m = std::min(detail::kHalfBlock, n - i0);
      detail::HalfToFloat(px + i0, fx, m);
      detail::HalfToFloat(py + i0, fy, m);
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) {
        const float a = fx[i], b = fy[i];
        fx[i] = a + b;
        fy[i] = a - b;
      }
      detail::FloatToHalf(fx, ps + i0, m);
      detail::FloatToHalf(fy, pd + i0, m);
    }
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float a = static_cast<float>(px[i]), b = static_cast<float>(py[i]);
    detail::Store(&ps[i], a + b);
    detail::Store(&pd[i], a - b);
  }
}

}  // namespace

void SplitAddCpu(const Tensor& x, const Tensor& y, Tensor& sum, Tensor& diff) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &y, &sum, &diff}) {
    detail::RequireCpuContiguous("SplitAddCpu", *t, "every tensor");
  }
  detail::DispatchFloating(x.dtype(), "SplitAddCpu", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    const T* py = y.data_ptr<T>();
    T* ps = sum.data_ptr<T>();
    T* pd = diff.data_ptr<T>();
    detail::ParallelChunks(x.numel(), [&](int64_t begin, int64_t end) {
      SplitAddChunk<T>(px + begin, py + begin, ps + begin, pd + begin, end - begin);
    });
  });
}

}  // namespace opreg::kernels::cpu
