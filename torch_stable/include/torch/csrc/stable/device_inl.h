// opreg::torch_stable: <torch/csrc/stable/device_inl.h> (here tensor.h / device.h hold it).
#pragma once
#include "device.h"
