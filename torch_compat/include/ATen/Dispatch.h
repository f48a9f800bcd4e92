// opreg::torch_compat: libtorch's <ATen/Dispatch.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/dispatch_macros.h"
