// opreg::torch_stable: <torch/headeronly/util/Half.h>. c10::Half (also torch::headeronly::Half) is
// opreg::Half: one header-only implementation, usable in host and device code, shared with opreg's
// tensors and opreg::torch_compat (conversions round to nearest even, as torch's).
#pragma once

#include "opreg/core/half.h"
#include "opreg/core/half_arithmetic.h"  // h += x, __ldg(h_ptr), ... as with torch's

namespace c10 {
using Half = ::opreg::Half;
}  // namespace c10

namespace torch::headeronly {
using c10::Half;
}  // namespace torch::headeronly
