// opreg::torch_stable: <torch/csrc/stable/tensor_inl.h> (here tensor.h / device.h hold it).
#pragma once
#include "tensor.h"
