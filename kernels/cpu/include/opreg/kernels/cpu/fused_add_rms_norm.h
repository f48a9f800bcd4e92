// CPU kernel for vLLM's fused_add_rms_norm, in place on input and residual:
//   residual = input + residual (rounded to the dtype);
//   input = residual / sqrt(mean(residual^2, -1) + eps) * weight.
// f32 accumulation.
//
// Preconditions (checked by the registrations): CPU, contiguous, one floating dtype (f32, f16,
// bf16); residual shaped like input; weight [input.size(-1)]; no overlap among the three.
#pragma once

#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

void FusedAddRmsNormInplace(Tensor& input, Tensor& residual, const Tensor& weight, double eps);

}  // namespace opreg::kernels::cpu
