// opreg::torch_compat: libtorch's <torch/headeronly/util/Float8_e4m3fnuz.h> (libtorch >= 2.9), mapped onto opreg
// (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/scalar_type.h"
