// opreg::torch_compat: <torch/headeronly/util/BFloat16-math.h>: std::exp(h), std::sqrt(h), ... of
// Half and BFloat16 returning the 16-bit type, and is_reduced_floating_point in c10 and
// torch::headeronly, as torch's (opreg/core/reduced_float_math.h).
#pragma once

#include "opreg/core/reduced_float_math.h"
