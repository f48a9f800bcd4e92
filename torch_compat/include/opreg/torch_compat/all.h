// Everything of opreg::torch_compat that host code may include (CUDA helpers: cuda.h).
#pragma once

#include "opreg/torch_compat/array_ref.h"
#include "opreg/torch_compat/device.h"
#include "opreg/torch_compat/dispatch_macros.h"
#include "opreg/torch_compat/kernel_traits.h"
#include "opreg/torch_compat/library.h"
#include "opreg/torch_compat/macros.h"
#include "opreg/torch_compat/parallel.h"
#include "opreg/torch_compat/scalar_type.h"
#include "opreg/torch_compat/tensor.h"
