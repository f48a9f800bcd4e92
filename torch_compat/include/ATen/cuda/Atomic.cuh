// opreg::torch_compat: libtorch's <ATen/cuda/Atomic.cuh>: gpuAtomicAdd / gpuAtomicMax /
// gpuAtomicMin for the element types kernels accumulate in (docs/torch_compat.md). Device code
// only. 16-bit float atomics need sm_70 (Half) / the toolkit's bfloat16 atomics.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "opreg/torch_compat/scalar_type.h"

__device__ inline float gpuAtomicAdd(float* address, float val) { return atomicAdd(address, val); }
__device__ inline double gpuAtomicAdd(double* address, double val) {
  return atomicAdd(address, val);
}
__device__ inline int gpuAtomicAdd(int* address, int val) { return atomicAdd(address, val); }
__device__ inline unsigned int gpuAtomicAdd(unsigned int* address, unsigned int val) {
  return atomicAdd(address, val);
}
__device__ inline int64_t gpuAtomicAdd(int64_t* address, int64_t val) {
  return static_cast<int64_t>(atomicAdd(reinterpret_cast<unsigned long long*>(address),  // NOLINT
                                        static_cast<unsigned long long>(val)));           // NOLINT
}
__device__ inline c10::Half gpuAtomicAdd(c10::Half* address, c10::Half val) {
  const __half old = atomicAdd(reinterpret_cast<__half*>(address),
                               __ushort_as_half(static_cast<unsigned short>(val.x)));
  return c10::Half(__half_as_ushort(old), c10::Half::from_bits());
}
__device__ inline c10::BFloat16 gpuAtomicAdd(c10::BFloat16* address, c10::BFloat16 val) {
  const __nv_bfloat16 old = atomicAdd(reinterpret_cast<__nv_bfloat16*>(address),
                                      __ushort_as_bfloat16(static_cast<unsigned short>(val.x)));
  return c10::BFloat16(__bfloat16_as_ushort(old), c10::BFloat16::from_bits());
}
template <class T>
__device__ inline void gpuAtomicAddNoReturn(T* address, T val) {
  gpuAtomicAdd(address, val);
}

__device__ inline int gpuAtomicMax(int* address, int val) { return atomicMax(address, val); }
__device__ inline int gpuAtomicMin(int* address, int val) { return atomicMin(address, val); }
// Floats through a compare-and-swap loop on their bits (NaN-free inputs).
__device__ inline float gpuAtomicMax(float* address, float val) {
  int* bits = reinterpret_cast<int*>(address);
  int old = *bits;
  while (__int_as_float(old) < val) {
    const int assumed = old;
    old = atomicCAS(bits, assumed, __float_as_int(val));
    if (old == assumed) break;
  }
  return __int_as_float(old);
}
__device__ inline float gpuAtomicMin(float* address, float val) {
  int* bits = reinterpret_cast<int*>(address);
  int old = *bits;
  while (__int_as_float(old) > val) {
    const int assumed = old;
    old = atomicCAS(bits, assumed, __float_as_int(val));
    if (old == assumed) break;
  }
  return __int_as_float(old);
}
