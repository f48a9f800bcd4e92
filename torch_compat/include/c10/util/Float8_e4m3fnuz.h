// opreg::torch_compat: libtorch's <c10/util/Float8_e4m3fnuz.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/scalar_type.h"
