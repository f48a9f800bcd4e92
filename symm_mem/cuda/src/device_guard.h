// DeviceGuard: makes a CUDA device current for a scope and restores the previous one (private
// to symm_mem/cuda/src). Errors: opreg::Error (kRuntime) when the device cannot be made
// current. Thread safety: affects the calling thread only.
#pragma once

#include <cuda_runtime_api.h>

#include "opreg/core/error.h"

namespace opreg::symm_mem::cuda {

// Throws opreg::Error (kRuntime) "symm_mem (cuda): <what> failed: <name>: <text>".
inline void CheckCudaRt(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  OPREG_THROW(kRuntime, "symm_mem (cuda): ", what, " failed: ", cudaGetErrorName(err), ": ",
              cudaGetErrorString(err));
}

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    CheckCudaRt(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) {
      CheckCudaRt(cudaSetDevice(device), StrCat("cudaSetDevice(", device, ")"));
      restore_ = true;
    }
  }
  ~DeviceGuard() {
    if (restore_) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

}  // namespace opreg::symm_mem::cuda
