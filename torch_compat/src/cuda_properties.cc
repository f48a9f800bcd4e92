// getDeviceProperties: cudaGetDeviceProperties once per device for the process (the call is
// slow, and kernel code asks on every launch for SM counts and shared-memory limits).
#include <array>
#include <mutex>

#include "opreg/torch_compat/cuda.h"

namespace c10::cuda {

cudaDeviceProp* getDeviceProperties(DeviceIndex device) {
  constexpr int kMaxDevices = 64;
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<cudaDeviceProp, kMaxDevices> props;
  TORCH_CHECK_INDEX(device >= 0 && device < kMaxDevices && device < device_count(),
                    "getDeviceProperties(): device ", static_cast<int>(device),
                    " is not a CUDA device of this process (", static_cast<int>(device_count()),
                    " visible)");
  std::call_once(once[device],
                 [device] { C10_CUDA_CHECK(cudaGetDeviceProperties(&props[device], device)); });
  return &props[device];
}

}  // namespace c10::cuda
