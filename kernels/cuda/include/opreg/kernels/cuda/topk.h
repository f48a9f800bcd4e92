// CUDA launcher of opreg::topk.out: per slice along `dim`, the k largest (largest=true,
// descending) or smallest (ascending) elements and their int64 positions. Ties keep the lower
// index first; NaN counts as larger than every number (as the CPU kernel and PyTorch).
//
// Algorithm and limits: one block per slice (up to 1024 threads). The slice is cached in shared
// memory as f32 when it fits (n <= kTopkSharedMaxN elements), else read from global memory (L2).
// The block then selects k times: each round every thread scans its elements for the best one
// ranked after the previous winner ((value, index) is a total order), and a warp-shuffle +
// shared-memory arg-reduction picks the round's winner. Cost per slice O(k * n / threads) plus
// 2 barriers per round, so this is meant for the modest k of sampling and MoE routing
// (k <= a few hundred); k > kTopkMaxK is refused with kNotImplemented. Results are sorted.
// x: contiguous f32/f16/bf16 CUDA tensor; values (x's dtype) and indices (i64): contiguous, x's
// shape with size k at dim. Asynchronous on `stream` (default: stream 0); errors as in add.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

inline constexpr int64_t kTopkMaxK = 1024;
// 44 KiB of f32: with the reduction scratch, under the 48 KiB a block gets without opting in.
inline constexpr int64_t kTopkSharedMaxN = 11 * 1024;

void TopkOut(const Tensor& x, int64_t k, int64_t dim, bool largest, const Tensor& values,
             const Tensor& indices, cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
