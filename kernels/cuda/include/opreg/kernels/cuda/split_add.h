// CUDA launcher of opreg::split_add.out: out0 = x + y, out1 = x - y, in one pass over x and y.
//
// Same contract as AddOut (add.h): one floating dtype, contiguous outputs of the broadcast shape
// of x and y, vectorized contiguous path / strided broadcast path, asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void SplitAddOut(const Tensor& x, const Tensor& y, const Tensor& out0, const Tensor& out1,
                 cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
