// CPU kernel for linear: out = x @ weight^T + bias, via OpenBLAS sgemm. f16/bf16 operands are
// converted to f32 (per-thread scratch buffers reused across calls), multiplied with sgemm and
// converted back.
//
// Preconditions (checked by the registrations): CPU, contiguous, one floating dtype (f32, f16,
// bf16); x [..., K], weight [N, K], bias undefined or [N]; out [..., N]; no overlap.
#pragma once

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

// `bias` may be an undefined Tensor (no bias).
void LinearOut(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& out);

}  // namespace opreg::kernels::cpu
