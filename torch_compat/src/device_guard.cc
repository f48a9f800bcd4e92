// c10::DeviceGuard over opreg's CUDA device guard (CPU and meta devices have nothing to set).
#include "opreg/core/cuda_device_guard.h"
#include "opreg/torch_compat/tensor.h"

namespace c10 {

DeviceGuard::DeviceGuard(Device device) {
  if (device.is_cuda()) guard_ = new ::opreg::CudaDeviceGuard(device.index());
}

DeviceGuard::~DeviceGuard() { delete static_cast<::opreg::CudaDeviceGuard*>(guard_); }

}  // namespace c10
