// opreg::torch_stable: <torch/csrc/stable/tensor_struct.h> (torch splits Tensor over three
// headers; here tensor.h holds it).
#pragma once
#include "tensor.h"
