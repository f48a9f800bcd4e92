// CPU kernel for silu_and_mul: out[..., i] = silu(x[..., i]) * x[..., d + i], x [..., 2d].
//
// Preconditions (checked by the registrations): CPU, contiguous x and out of one floating dtype
// (f32, f16, bf16); out [..., d]; no overlap. Computed in f32.
#pragma once

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

void SiluAndMulOut(const Tensor& x, Tensor& out);

}  // namespace opreg::kernels::cpu
