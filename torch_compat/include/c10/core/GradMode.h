// opreg::torch_compat: libtorch's <c10/core/GradMode.h> (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/grad_mode.h"
