// opreg::torch_compat: libtorch's <c10/macros/Macros.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/macros.h"
