// Shared device helpers of opreg's CUDA kernels (private to kernels/cuda/src; nvcc only).
//
//   - Element types: the device type of each DType (float, __half, __nv_bfloat16) and float
//     conversions (all arithmetic is done in f32).
//   - Vector<T>: 16 bytes of T (4 floats, 8 halves) loaded / stored as one uint4.
//   - WarpReduce / BlockReduce over float (sum, max) with __shfl_xor_sync and 32 floats of
//     shared memory.
//   - Launch helpers: grid sizes from the SM count, CheckLaunch() turning launch errors into
//     opreg::Error (kRuntime). Nothing here synchronizes.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "opreg/core/dtype_visit.h"
#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/core/string_util.h"
#include "opreg/core/tensor.h"
#include "opreg/kernels/cuda/element_types.cuh"

namespace opreg {
namespace kernels {
namespace cuda {
namespace detail {

// ---- Element types (opreg/kernels/cuda/element_types.cuh) -----------------------------------

using device::DeviceType;
using device::FromFloat;
using device::ToFloat;
using device::Vector;

// Calls fn(T{}) with the device element type of a floating dtype (f32, f16, bf16); kType error
// naming `op` for anything else.
template <class Fn>
void DispatchFloating(DType dtype, const char* op, Fn&& fn) {
  VisitFloatingDType(
      dtype, [&fn](auto tag) { fn(DeviceType<decltype(tag)>{}); },
      [op](DType unsupported) {
        OPREG_THROW(kType, op, "(): CUDA kernel supports f32, f16 and bf16, got ",
                    DTypeName(unsupported));
      });
}

// ---- 16-byte vectors -------------------------------------------------------------------------

// Plain loads (not __ldg): out-of-place ops may be called with out aliasing an input.
template <class T>
__device__ __forceinline__ Vector<T> LoadVector(const T* p) {
  Vector<T> r;
  *reinterpret_cast<uint4*>(&r) = *reinterpret_cast<const uint4*>(p);
  return r;
}
template <class T>
__device__ __forceinline__ void StoreVector(T* p, const Vector<T>& v) {
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(&v);
}

inline bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// ---- Reductions ------------------------------------------------------------------------------

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <class Op>
__device__ __forceinline__ float WarpReduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces `v` over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the
// result. Contains __syncthreads(): every thread of the block must call it.
template <class Op>
__device__ __forceinline__ float BlockReduce(float v, Op op, float identity) {
  __shared__ float shared[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int nwarps = blockDim.x >> 5;
  v = WarpReduce(v, op);
  __syncthreads();  // `shared` may still be read by a previous call.
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < nwarps ? shared[lane] : identity;
  return WarpReduce(v, op);
}

// ---- Launching -------------------------------------------------------------------------------

// Multiprocessors of the current device (cached per device).
int MultiProcessorCount();

// Threads for a one-block-per-row kernel whose rows have `work` items: a multiple of 32 in
// [32, max_threads].
inline int RowBlockThreads(int64_t work, int max_threads = 1024) {
  int64_t t = (work + 31) / 32 * 32;
  return static_cast<int>(std::clamp<int64_t>(t, 32, max_threads));
}

// Blocks of `threads` for a grid-stride loop over `work` items: enough to fill the device
// (a few waves), no more than the work needs.
inline unsigned GridStrideBlocks(int64_t work, int threads) {
  const int64_t needed = (work + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(MultiProcessorCount()) * 8;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(needed, cap)));
}

// Throws opreg::Error (kRuntime) when the last launch failed ("<op>: CUDA kernel launch
// failed: ..."). Does not synchronize: errors from the kernel's execution surface later.
void CheckLaunch(const char* op);
// Same for any CUDA runtime status.
void CheckCuda(cudaError_t err, const char* what);

// Preconditions shared by the launchers.
void CheckCudaTensor(const Tensor& t, const char* op, const char* name);
void CheckContiguous(const Tensor& t, const char* op, const char* name);
void CheckSameDType(const Tensor& a, const Tensor& b, const char* op, const char* name_a,
                    const char* name_b);

}  // namespace detail
}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
