// CUDA launcher of opreg::silu_and_mul.out: out[r, i] = silu(x[r, i]) * x[r, d + i] for x viewed
// as [rows, 2d], silu(a) = a / (1 + exp(-a)) in f32.
//
// Grid (rows, column chunks): each block covers up to 1024 * 16 bytes of one row's outputs,
// 16-byte vectorized when d is a multiple of 16 / itemsize and the pointers are aligned, scalar
// otherwise (odd d). x and out are contiguous CUDA tensors of one dtype (f32, f16, bf16).
// Asynchronous on `stream` (default: stream 0); errors as in add.h.
#pragma once

#include <cuda_runtime_api.h>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void SiluAndMulOut(const Tensor& x, const Tensor& out, cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
