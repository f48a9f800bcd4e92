// CUDA launcher of opreg::add.out: out = self + alpha * other, with broadcasting.
//
// self, other and out are CUDA tensors of one dtype (f32, f16, bf16; f32 arithmetic); out is
// contiguous with the broadcast shape (it may be self or other itself). Contiguous same-shape
// inputs take a 16-byte vectorized grid-stride kernel with a scalar tail; anything else the
// strided broadcast kernel (at most 8 dims). Launches on `stream` (default: the legacy default
// stream 0) and returns without synchronizing; launch errors throw opreg::Error (kRuntime),
// bad arguments kValue / kType.
#pragma once

#include <cuda_runtime_api.h>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void AddOut(const Tensor& self, const Tensor& other, double alpha, const Tensor& out,
            cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
