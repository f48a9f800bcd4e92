// opreg::torch_compat: libtorch's <ATen/cpu/Utils.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/cpu_capabilities.h"
