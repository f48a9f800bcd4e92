// CUDA launcher of opreg::linear.out: out[..., N] = x[..., K] @ weight[N, K]^T (+ bias[N]).
//
// cuBLAS cublasGemmEx with f32 compute (CUBLAS_COMPUTE_32F, no TF32) for f32, f16 and bf16
// operands (out in the operands' dtype), then, with a bias, a vectorized grid-stride bias-add
// kernel over out. The GEMM is computed as the column-major out^T = weight * x^T (weight
// transposed), so no operand is copied. One cuBLAS handle per (thread, device), created on first
// use and bound to `stream` for each call. x, weight, bias and out: contiguous CUDA tensors of one
// dtype; M = x.numel() / K, N and K must fit cuBLAS's int. Asynchronous on `stream` (default:
// stream 0); cuBLAS and launch errors throw opreg::Error (kRuntime).
#pragma once

#include <cuda_runtime_api.h>

#include <optional>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void LinearOut(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
               const Tensor& out, cudaStream_t stream = nullptr);

// out[r, :] += bias for out viewed as [numel / N, N], N = bias.numel() (the epilogue of
// LinearOut, exposed for tests and benchmarks). Contiguous CUDA tensors of one floating dtype.
void BiasAddInplace(const Tensor& out, const Tensor& bias, cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
