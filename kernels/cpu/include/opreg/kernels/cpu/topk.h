// CPU kernel for topk along one dimension.
//
// values/indices hold, per slice along `dim`, the k largest (largest=true, descending) or
// smallest (ascending) elements and their int64 positions; ties keep the lower index first;
// NaN counts as larger than every number (as in PyTorch).
//
// Preconditions (checked by the registrations): CPU, contiguous x of f32/f16/bf16; dim in
// [0, x.dim()); 0 <= k <= x.size(dim); values (x's dtype) and indices (i64) contiguous, x's
// shape with size k at dim; no overlap.
#pragma once

#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

void TopkOut(const Tensor& x, int64_t k, int64_t dim, bool largest, Tensor& values,
             Tensor& indices);

}  // namespace opreg::kernels::cpu
