// opreg::torch_compat: libtorch's <ATen/cpu/vec/vec.h> (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/vec.h"
