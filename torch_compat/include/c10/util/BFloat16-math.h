// opreg::torch_compat: libtorch's <c10/util/BFloat16-math.h> (docs/torch_compat.md).
#pragma once

#include "torch/headeronly/util/BFloat16-math.h"
