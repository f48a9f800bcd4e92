// opreg::torch_compat: libtorch's <ATen/native/cpu/utils.h> (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/native_cpu_utils.h"
