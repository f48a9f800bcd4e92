// opreg::torch_compat: libtorch's <torch/headeronly/macros/Macros.h> (libtorch >= 2.9; STD_TORCH_CHECK),
// mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/macros.h"
