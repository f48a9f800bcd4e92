// opreg::torch_compat: libtorch's <c10/util/Float8_e5m2fnuz.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/scalar_type.h"
