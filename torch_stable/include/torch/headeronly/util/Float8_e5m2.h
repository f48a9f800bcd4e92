// opreg::torch_stable: <torch/headeronly/util/Float8_e5m2.h>. c10::Float8_e5m2 (also
// torch::headeronly::Float8_e5m2) is opreg::Float8E5M2: one header-only implementation, usable in
// host and device code, shared with opreg's tensors and opreg::torch_compat (conversions round to
// nearest even, as torch's).
#pragma once

#include "opreg/core/half.h"

namespace c10 {
using Float8_e5m2 = ::opreg::Float8E5M2;
}  // namespace c10

namespace torch::headeronly {
using c10::Float8_e5m2;
}  // namespace torch::headeronly
