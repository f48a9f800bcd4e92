#include "opreg/kernels/cpu/per_token_quant.h"

#include <algorithm>
#include <cmath>

#include "common.h"
#include "vec_math.h"

namespace opreg::kernels::cpu {
namespace {

template <class T, class Q>
void Quantize(const Tensor& x, Tensor& q, Tensor& scale, float qmax) {
  const int64_t h = x.size(-1), rows = detail::Rows(x);
  const T* __restrict in = x.data_ptr<T>();
  Q* __restrict out = q.data_ptr<Q>();
  float* __restrict sc = scale.data_ptr<float>();
#pragma omp parallel for if (rows * h > detail::kParallelGrain) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const T* __restrict row = in + r * h;
    Q* __restrict qrow = out + r * h;
    float absmax = 0.0f;
#pragma omp simd reduction(max : absmax)
    for (int64_t j = 0; j < h; ++j)
      absmax = std::max(absmax, std::fabs(static_cast<float>(row[j])));
    const float s = absmax / qmax;
    sc[r] = s;
    const float inv = s == 0.0f ? 0.0f : 1.0f / s;
    if constexpr (std::is_same_v<Q, int8_t>) {
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) {
        // Clamp first: the magic-number rounding needs |v| < 2^22.
        const float v = std::min(127.0f, std::max(-127.0f, static_cast<float>(row[j]) * inv));
        qrow[j] = static_cast<int8_t>(detail::RoundHalfEven(v));
      }
    } else {
      for (int64_t j = 0; j < h; ++j) qrow[j] = Q(static_cast<float>(row[j]) * inv);
    }
  }
}

}  // namespace

void PerTokenQuantCpu(const Tensor& x, Tensor& q, Tensor& scale) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &q, &scale}) {
    detail::RequireCpuContiguous("PerTokenQuantCpu", *t, "every tensor");
  }
  detail::DispatchFloating(x.dtype(), "PerTokenQuantCpu", [&](auto tag) {
    using T = decltype(tag);
    if (q.dtype() == DType::kInt8) {
      Quantize<T, int8_t>(x, q, scale, 127.0f);
    } else if (q.dtype() == DType::kFloat8E4M3FN) {
      Quantize<T, Float8E4M3FN>(x, q, scale, 448.0f);
    } else {
      OPREG_THROW(kType, "PerTokenQuantCpu: unsupported output dtype ", DTypeName(q.dtype()));
    }
  });
}

}  // namespace opreg::kernels::cpu
