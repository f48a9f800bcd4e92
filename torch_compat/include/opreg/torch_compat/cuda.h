// libtorch's CUDA helpers for kernel code: at::cuda::getCurrentCUDAStream (opreg's current
// stream of a device, which callers from Python or torch set), CUDAStream, CUDAGuard /
// OptionalCUDAGuard (opreg::CudaDeviceGuard), getCurrentDeviceProperties,
// getCurrentCUDABlasHandle, the C10_CUDA_CHECK family. Include only from translation units compiled
// with the CUDA toolkit's headers.
//
// Errors: a failing CUDA call in C10_CUDA_CHECK / AT_CUDA_CHECK throws opreg::Error (kRuntime)
// with cudaGetErrorString's text and the call site.
//
// Thread safety: the current stream and device are per thread, as in libtorch.
#pragma once

// cuda.h too, as libtorch's CUDA headers bring it (kernels test CUDA_VERSION).
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <optional>

#include "opreg/core/cuda_device_guard.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/torch_compat/device.h"
#include "opreg/torch_compat/macros.h"
#include "opreg/torch_compat/tensor.h"

#define C10_CUDA_CHECK(EXPR)                                                                 \
  do {                                                                                       \
    const cudaError_t opreg_cuda_err_ = (EXPR);                                              \
    if (C10_UNLIKELY(opreg_cuda_err_ != cudaSuccess)) {                                      \
      ::c10::detail::Fail(                                                                   \
          ::opreg::ErrorKind::kRuntime,                                                      \
          ::c10::str("CUDA error: ", cudaGetErrorString(opreg_cuda_err_), " (", #EXPR, ")"), \
          __FILE__, __LINE__);                                                               \
    }                                                                                        \
  } while (false)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#define AT_CUDA_CHECK(EXPR) C10_CUDA_CHECK(EXPR)
#define C10_CUDA_CHECK_WARN(EXPR)                                        \
  do {                                                                   \
    const cudaError_t opreg_cuda_err_ = (EXPR);                          \
    if (opreg_cuda_err_ != cudaSuccess) {                                \
      TORCH_WARN("CUDA warning: ", cudaGetErrorString(opreg_cuda_err_)); \
    }                                                                    \
  } while (false)

namespace c10::cuda {

inline DeviceIndex current_device() {
  int device = 0;
  C10_CUDA_CHECK(cudaGetDevice(&device));
  return static_cast<DeviceIndex>(device);
}
inline DeviceIndex device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? static_cast<DeviceIndex>(n) : 0;
}

// A stream of one device; converts to cudaStream_t.
class CUDAStream {
 public:
  CUDAStream(cudaStream_t stream, DeviceIndex device) : stream_(stream), device_(device) {}
  cudaStream_t stream() const { return stream_; }
  operator cudaStream_t() const { return stream_; }  // NOLINT: as in c10.
  DeviceIndex device_index() const { return device_; }
  Device device() const { return Device(kCUDA, device_); }
  void synchronize() const { C10_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_;
  DeviceIndex device_;
};

// The stream opreg runs work of `device` (-1: the current device) on, for this thread.
inline CUDAStream getCurrentCUDAStream(DeviceIndex device = -1) {
  const DeviceIndex d = device < 0 ? current_device() : device;
  return CUDAStream(static_cast<cudaStream_t>(::opreg::CurrentCudaStream(d)), d);
}
inline CUDAStream getDefaultCUDAStream(DeviceIndex device = -1) {
  return CUDAStream(nullptr, device < 0 ? current_device() : device);
}
// Makes `stream` current for its device on this thread.
inline void setCurrentCUDAStream(CUDAStream stream) {
  ::opreg::SetCurrentCudaStream(stream.device_index(), stream.stream());
}

// Sets the current device for its scope; restores the previous one.
class CUDAGuard {
 public:
  explicit CUDAGuard(DeviceIndex device) : guard_(device) {}
  explicit CUDAGuard(Device device) : guard_(device.index()) {}

 private:
  ::opreg::CudaDeviceGuard guard_;
};

// CUDAGuard when given a CUDA device with an index; nothing otherwise (CPU tensors, nullopt).
class OptionalCUDAGuard {
 public:
  OptionalCUDAGuard() = default;
  explicit OptionalCUDAGuard(std::optional<Device> device) { set_device(device); }
  explicit OptionalCUDAGuard(DeviceIndex device) { guard_.emplace(device); }
  void set_device(std::optional<Device> device) {
    if (device && device->is_cuda() && device->has_index()) guard_.emplace(device->index());
  }
  void set_index(DeviceIndex device) { guard_.emplace(device); }
  void reset() { guard_.reset(); }

 private:
  std::optional<::opreg::CudaDeviceGuard> guard_;
};

// Cached per device for the process.
cudaDeviceProp* getDeviceProperties(DeviceIndex device);
// This thread's cuBLAS handle for the current device, bound to the current stream (created on
// first use, destroyed when the thread exits).
cublasHandle_t getCurrentCUDABlasHandle();
inline cudaDeviceProp* getCurrentDeviceProperties() {
  return getDeviceProperties(current_device());
}

}  // namespace c10::cuda

namespace at::cuda {
using namespace ::c10::cuda;  // NOLINT: libtorch's at::cuda re-exports c10::cuda.
}  // namespace at::cuda

// torch/cuda.h's queries.
namespace torch::cuda {
inline int64_t device_count() { return ::c10::cuda::device_count(); }
inline bool is_available() { return device_count() > 0; }
// Waits for all work on `device_index` (-1: the current device).
inline void synchronize(int64_t device_index = -1) {
  const ::c10::cuda::CUDAGuard guard(static_cast<::c10::DeviceIndex>(
      device_index < 0 ? ::c10::cuda::current_device() : device_index));
  C10_CUDA_CHECK(cudaDeviceSynchronize());
}
}  // namespace torch::cuda
