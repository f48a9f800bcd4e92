// CPU kernel for split_add: sum = x + y, diff = x - y.
//
// Preconditions (checked by the registrations): CPU, contiguous x and y of one floating dtype
// (f32, f16, bf16) and one shape; sum and diff contiguous, shaped like x; no overlap.
#pragma once

#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

void SplitAddOut(const Tensor& x, const Tensor& y, Tensor& sum, Tensor& diff);

}  // namespace opreg::kernels::cpu
