// CPU kernel for per-token (per-row) dynamic quantization.
//
// For each row r of x viewed as [rows, hidden]: absmax = max |x[r, :]| (f32);
// scale[r] = absmax / qmax (qmax 127 for i8, 448 for f8e4m3fn); q = x / scale, for i8 rounded to
// nearest even and clamped to [-127, 127], for f8e4m3fn converted with saturation. A row of
// zeros gets scale 0 and q 0.
//
// Preconditions (checked by the registrations): CPU, contiguous; x f32/f16/bf16; q shaped like
// x with dtype i8 or f8e4m3fn; scale f32 with rows elements; no overlap.
#pragma once

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

void PerTokenQuantOut(const Tensor& x, Tensor& q, Tensor& scale);

}  // namespace opreg::kernels::cpu
