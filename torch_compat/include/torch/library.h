// opreg::torch_compat: libtorch's <torch/library.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/library.h"
