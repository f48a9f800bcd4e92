// opreg::torch_compat: libtorch's <torch/cuda.h> (device_count, is_available, synchronize),
// mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/cuda.h"
