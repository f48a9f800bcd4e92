// opreg::torch_compat: libtorch's <ATen/native/CPUBlas.h> (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/cpublas.h"
