// The stable shim's CUDA runtime calls (host code), through opreg::torch_compat's CUDA helpers so
// that a stable-ABI kernel and a classic one on the same thread share one cuBLAS handle per
// device and one notion of the current device.
#include "opreg/torch_compat/cuda.h"

#include <cuda_runtime_api.h>

#include "cuda_runtime_calls.h"

namespace opreg::torch_stable {

int32_t CurrentCudaDeviceIndex() { return c10::cuda::current_device(); }

void SetCurrentCudaDeviceIndex(int32_t index) {
  const cudaError_t err = cudaSetDevice(index);
  OPREG_CHECK(err == cudaSuccess, "cudaSetDevice(", index, ") failed: ", cudaGetErrorString(err));
}

void* CurrentCublasHandle() { return c10::cuda::getCurrentCUDABlasHandle(); }

void SynchronizeCudaStream(void* stream, int32_t device_index) {
  opreg::CudaDeviceGuard guard(device_index);
  const cudaError_t err = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  OPREG_CHECK(err == cudaSuccess, "cudaStreamSynchronize failed: ", cudaGetErrorString(err));
}

std::string CudaErrorMessage(int32_t err) {
  if (err == cudaSuccess) return std::string();
  const cudaError_t e = static_cast<cudaError_t>(err);
  return std::string("CUDA error: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}

}  // namespace opreg::torch_stable
