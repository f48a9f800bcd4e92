// Everything of opreg::torch_compat that host code may include (CUDA helpers: cuda.h).
#pragma once

// libtorch's headers bring <iomanip> in; kernel code uses std::setprecision without it.
#include <iomanip>

#include "opreg/torch_compat/array_ref.h"
#include "opreg/torch_compat/cpu_capabilities.h"
#include "opreg/torch_compat/device.h"
#include "opreg/torch_compat/dispatch_macros.h"
#include "opreg/torch_compat/grad_mode.h"
#include "opreg/torch_compat/kernel_traits.h"
#include "opreg/torch_compat/library.h"
#include "opreg/torch_compat/macros.h"
#include "opreg/torch_compat/parallel.h"
#include "opreg/torch_compat/scalar_type.h"
#include "opreg/torch_compat/small_vector.h"
#include "opreg/torch_compat/tensor.h"
