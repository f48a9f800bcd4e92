// opreg::torch_compat: libtorch's <c10/core/DeviceGuard.h> (c10::DeviceGuard,
// OptionalDeviceGuard), mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/tensor.h"
