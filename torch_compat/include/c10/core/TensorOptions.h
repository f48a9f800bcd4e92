// opreg::torch_compat: libtorch's <c10/core/TensorOptions.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/all.h"
