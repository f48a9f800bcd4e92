// CUDA launcher of opreg::rms_norm.out:
//   out[r, :] = input[r, :] * rsqrt(mean(input[r, :]^2) + eps) * weight     (f32 arithmetic)
// over the rows r of input viewed as [numel / H, H], H = input.size(-1).
//
// One block per row (up to 1024 threads): a sum of squares with warp-shuffle + shared-memory
// block reduction, then a second pass that writes (the row is re-read, normally from L1/L2).
// 16-byte vectorized loads and stores when H is a multiple of 16 / itemsize and the pointers are
// 16-byte aligned, scalar loops otherwise (odd H). input, weight ([H]) and out (input's shape)
// are contiguous CUDA tensors of one dtype (f32, f16, bf16). out may be input itself.
// Asynchronous on `stream` (default: stream 0); errors as in add.h.
#pragma once

#include <cuda_runtime_api.h>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void RmsNormOut(const Tensor& input, const Tensor& weight, double eps, const Tensor& out,
                cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
