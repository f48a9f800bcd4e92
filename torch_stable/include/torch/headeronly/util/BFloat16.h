// opreg::torch_stable: <torch/headeronly/util/BFloat16.h>. c10::BFloat16 (also
// torch::headeronly::BFloat16) is opreg::BFloat16: one header-only implementation, usable in host
// and device code, shared with opreg's tensors and opreg::torch_compat (conversions round to
// nearest even, as torch's).
#pragma once

#include "opreg/core/half.h"
#include "opreg/core/half_arithmetic.h"  // h += x, __ldg(h_ptr), ... as with torch's

namespace c10 {
using BFloat16 = ::opreg::BFloat16;
}  // namespace c10

namespace torch::headeronly {
using c10::BFloat16;
}  // namespace torch::headeronly
