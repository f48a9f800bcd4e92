// opreg::torch_compat: libtorch's <c10/util/Logging.h> (CHECK; docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/macros.h"
