// The second pass shared by rms_norm and fused_add_rms_norm_ (private to kernels/cuda/src): one
// block writes y = src * inv * weight over a row of `hidden` elements, where inv is the row's
// 1 / sqrt(mean(src^2) + eps) from the first pass. kVectorized: 16-byte vectors (the caller has
// checked hidden % V == 0 and 16-byte aligned pointers); the scalar loop covers the rest.
#pragma once

#include "device_helpers.cuh"

namespace opreg {
namespace kernels {
namespace cuda {
namespace detail {

template <class T, bool kVectorized>
__device__ __forceinline__ void ScaleRowByWeight(T* y, const T* src, const T* __restrict__ weight,
                                                 int64_t hidden, float inv) {
  constexpr int V = Vector<T>::kSize;
  const int64_t nvec = kVectorized ? hidden / V : 0;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const Vector<T> z = LoadVector(src + i * V);
    const Vector<T> w = LoadVector(weight + i * V);
    Vector<T> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = FromFloat<T>(ToFloat(z.v[j]) * inv * ToFloat(w.v[j]));
    StoreVector(y + i * V, r);
  }
  for (int64_t i = nvec * V + threadIdx.x; i < hidden; i += blockDim.x) {
    y[i] = FromFloat<T>(ToFloat(src[i]) * inv * ToFloat(weight[i]));
  }
}

}  // namespace detail
}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
