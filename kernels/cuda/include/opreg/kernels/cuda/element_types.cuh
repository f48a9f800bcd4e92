// Device-side conversions between the element types of opreg's floating dtypes (float, __half,
// __nv_bfloat16) and float, in which every CUDA kernel does its arithmetic, and the 16-byte vector
// of them that the kernels load and store. FromFloat rounds to nearest even. Shared by
// kernels/cuda and the symmetric-memory collectives (nvcc only).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "opreg/core/half.h"

namespace opreg::kernels::cuda::device {

// The device element type of a core element type (what VisitFloatingDType hands out): __half for
// opreg::Half, __nv_bfloat16 for opreg::BFloat16, the type itself otherwise.
template <class T>
struct DeviceTypeOf {
  using type = T;
};
template <>
struct DeviceTypeOf<Half> {
  using type = __half;
};
template <>
struct DeviceTypeOf<BFloat16> {
  using type = __nv_bfloat16;
};
template <class T>
using DeviceType = typename DeviceTypeOf<T>::type;

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// 16 bytes of T, for one 128-bit load or store (the address must be 16-byte aligned).
template <class T>
struct alignas(16) Vector {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

}  // namespace opreg::kernels::cuda::device
