// opreg::torch_compat: libtorch's <ATen/Operators.h> (the at::_ops declarations, which the
// official custom-op tutorial, pytorch/extension-cpp, includes), mapped onto opreg's at:: API
// (docs/torch_compat.md). Code that names at::_ops::<op> directly is outside the subset.
#pragma once

#include "opreg/torch_compat/all.h"
