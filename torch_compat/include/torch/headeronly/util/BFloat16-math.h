// opreg::torch_compat: <torch/headeronly/util/BFloat16-math.h>: std::exp(h), std::sqrt(h), ... of
// Half and BFloat16 returning the 16-bit type, as torch's (opreg/core/reduced_float_math.h).
#pragma once

#include "opreg/core/reduced_float_math.h"

namespace c10 {
using ::opreg::is_reduced_floating_point;
using ::opreg::is_reduced_floating_point_v;
}  // namespace c10

namespace torch::headeronly {
using ::opreg::is_reduced_floating_point;
using ::opreg::is_reduced_floating_point_v;
}  // namespace torch::headeronly
