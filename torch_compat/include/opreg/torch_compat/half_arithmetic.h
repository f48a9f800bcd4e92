// libtorch's arithmetic on c10::Half and c10::BFloat16 (c10/util/Half-inl.h): opreg's
// (opreg/core/half_arithmetic.h), shared with opreg::torch_stable.
#pragma once

#include "opreg/core/half_arithmetic.h"
