// CPU kernel for mul: out = self * other, broadcasting. Same preconditions and paths as
// AddOut (add.h).
#pragma once

#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu {

void MulOut(const Tensor& self, const Tensor& other, Tensor& out);

}  // namespace opreg::kernels::cpu
