// opreg::torch_compat: libtorch's <ATen/core/dispatch/Dispatcher.h> (included by kernel
// libraries for torch::Library and the registration macros), mapped onto opreg
// (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/all.h"
