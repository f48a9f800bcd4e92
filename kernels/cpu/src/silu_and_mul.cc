#include "opreg/kernels/cpu/silu_and_mul.h"

#include <cmath>

#include "common.h"
#include "vec_math.h"

namespace opreg::kernels::cpu {

void SiluAndMulCpu(const Tensor& x, Tensor& out) {
  detail::RequireCpuContiguous("SiluAndMulCpu", x, "x");
  detail::RequireCpuContiguous("SiluAndMulCpu", out, "out");
  detail::DispatchFloating(x.dtype(), "SiluAndMulCpu", [&](auto tag) {
    using T = decltype(tag);
    const int64_t d = out.size(-1), rows = detail::Rows(out);
    const T* __restrict in = x.data_ptr<T>();
    T* __restrict o = out.data_ptr<T>();
#pragma omp parallel for if (rows * d > detail::kParallelGrain) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* __restrict a = in + r * 2 * d;
      const T* __restrict b = a + d;
      T* __restrict y = o + r * d;
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) {
        const float av = static_cast<float>(a[j]);
        detail::Store(&y[j], av / (1.0f + detail::ExpF(-av)) * static_cast<float>(b[j]));
      }
    }
  });
}

}  // namespace opreg::kernels::cpu
