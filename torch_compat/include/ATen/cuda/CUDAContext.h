// opreg::torch_compat: libtorch's <ATen/cuda/CUDAContext.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/cuda.h"
