// CUDA launcher of opreg::fused_add_rms_norm_ (in place on two tensors):
//   residual <- input + residual                    (rounded to the dtype)
//   input    <- rms_norm(residual, weight, eps)     (as RmsNormOut, from the rounded residual)
//
// One block per row; pass 1 adds, stores the residual and accumulates the sum of squares, pass
// 2 re-reads the residual and writes the normalized row into input. 16-byte vectorized when H
// is a multiple of 16 / itemsize and the pointers are aligned, scalar otherwise. input and
// residual (same shape) and weight ([H]) are contiguous CUDA tensors of one dtype (f32, f16,
// bf16); input and residual must not overlap. Asynchronous on `stream`; errors as in add.h.
#pragma once

#include <cuda_runtime_api.h>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void FusedAddRmsNormInplace(const Tensor& input, const Tensor& residual, const Tensor& weight,
                            double eps, cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
