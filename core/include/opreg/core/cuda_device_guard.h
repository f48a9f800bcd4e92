// CudaDeviceGuard: makes a CUDA device current for the calling thread for a scope, then restores
// the device that was current before. Used by everything that launches or allocates on a given
// device (the CUDA allocator, the CUDA op registrations, the symmetric-memory CUDA backend).
//
// A negative index (Device::cuda(-1): "the current device") leaves the current device alone.
// Errors: the constructor throws opreg::Error (kRuntime naming the CUDA call) when the device
// cannot be made current, and kNotImplemented for a non-negative index in builds without CUDA;
// the destructor never throws. No CUDA header is needed to use it.
// Thread safety: affects the calling thread only.
#pragma once

namespace opreg {

class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device);
  ~CudaDeviceGuard();
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool restore_ = false;
};

}  // namespace opreg
