// CUDA launcher of opreg::mul.out: out = self * other, with broadcasting.
//
// Same contract as AddOut (add.h): one floating dtype, contiguous out with the broadcast shape,
// vectorized contiguous path / strided broadcast path, asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void MulOut(const Tensor& self, const Tensor& other, const Tensor& out,
            cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
