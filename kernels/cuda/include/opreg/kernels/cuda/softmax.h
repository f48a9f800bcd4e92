// CUDA launcher of opreg::softmax.out: out = exp(x - max) / sum(exp(x - max)) along `dim`
// (f32 arithmetic).
//
// x viewed as [outer, n, inner] around dim:
//   - inner == 1 (the last dim, the usual case): one block per row; one read computes the max
//     and the sum together (online softmax: per-thread running (max, sum), merged by warp
//     shuffles and a block reduction), a second read writes. 16-byte vectorized when n is a
//     multiple of 16 / itemsize and the pointers are aligned, scalar otherwise;
//   - inner > 1: one thread per (outer, inner) column, reading down the column (coalesced across
//     neighbouring threads), same online algorithm.
// x and out: contiguous CUDA tensors of one dtype (f32, f16, bf16), same shape; dim in
// [-x.dim(), x.dim()). Asynchronous on `stream` (default: stream 0); errors as in add.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void SoftmaxOut(const Tensor& x, int64_t dim, const Tensor& out, cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
