// CPU kernels for RMS normalization over the last dimension (f32 accumulation).
//
// Preconditions (checked by the registrations): CPU, contiguous, one floating dtype (f32, f16,
// bf16); weight [hidden] with hidden = input.size(-1); outputs shaped like input; no overlap.
#pragma once

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

// out = input / sqrt(mean(input^2, -1) + eps) * weight.
void RmsNormOut(const Tensor& input, const Tensor& weight, double eps, Tensor& out);

}  // namespace opreg::kernels::cpu
