// opreg::torch_compat: libtorch's <c10/util/SmallVector.h> (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/small_vector.h"
