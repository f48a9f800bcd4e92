// CPU kernel for a numerically stable softmax along one dimension (max-subtracted, f32).
//
// Preconditions (checked by the registrations): CPU, contiguous x and out of one floating dtype
// (f32, f16, bf16), same shape; dim in [0, x.dim()); no overlap.
#pragma once

#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

void SoftmaxOut(const Tensor& x, int64_t dim, Tensor& out);

}  // namespace opreg::kernels::cpu
