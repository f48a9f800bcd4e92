// opreg::torch_stable: <torch/headeronly/util/Float8_e4m3fn.h>. c10::Float8_e4m3fn (also
// torch::headeronly::Float8_e4m3fn) is opreg::Float8E4M3FN: one header-only implementation, usable
// in host and device code, shared with opreg's tensors and opreg::torch_compat (conversions round
// to nearest even, as torch's).
#pragma once

#include "opreg/core/half.h"

namespace c10 {
using Float8_e4m3fn = ::opreg::Float8E4M3FN;
}  // namespace c10

namespace torch::headeronly {
using c10::Float8_e4m3fn;
}  // namespace torch::headeronly
