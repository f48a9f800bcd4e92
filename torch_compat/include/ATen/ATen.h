// opreg::torch_compat: libtorch's <ATen/ATen.h>, mapped onto opreg (docs/torch_compat.md).
#pragma once

#include "opreg/torch_compat/all.h"
