// opreg::torch_stable: <torch/headeronly/util/Float8_e4m3fnuz.h>. c10::Float8_e4m3fnuz (also
// torch::headeronly::Float8_e4m3fnuz) is opreg::Float8E4M3FNUZ: one header-only implementation,
// usable in host and device code, shared with opreg's tensors and opreg::torch_compat (conversions
// round to nearest even, as torch's).
#pragma once

#include "opreg/core/float8_fnuz.h"

namespace c10 {
using Float8_e4m3fnuz = ::opreg::Float8E4M3FNUZ;
}  // namespace c10

namespace torch::headeronly {
using c10::Float8_e4m3fnuz;
}  // namespace torch::headeronly
