// opreg::torch_compat: libtorch's <c10/util/ArrayRef.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/array_ref.h"
