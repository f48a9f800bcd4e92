// CPU kernel for add: out = self + alpha * other, broadcasting.
//
// Preconditions (checked by the registrations, ops/src/register_cpu.cc, not here): CPU tensors
// of one floating dtype (f32, f16, bf16); out contiguous with the broadcast shape and the
// inputs' dtype; out overlaps no input. Inputs may have any strides: same-shape contiguous
// inputs take a vectorized fast path, others (broadcast or strided views) a general path over
// computed strides. f32 arithmetic; OpenMP above a size threshold.
#pragma once

#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

void AddOut(const Tensor& self, const Tensor& other, double alpha, Tensor& out);

}  // namespace opreg::kernels::cpu
