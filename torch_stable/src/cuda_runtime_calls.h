// The few CUDA runtime calls the shim makes, behind plain declarations so that the rest of the
// shim needs no CUDA headers: cuda_runtime_calls_cuda.cc implements them with the runtime, and
// cuda_runtime_calls_stub.cc (builds without CUDA) fails each with an error saying CUDA was not
// built.
#pragma once

#include <cstdint>
#include <string>

namespace opreg::torch_stable {

int32_t CurrentCudaDeviceIndex();
void SetCurrentCudaDeviceIndex(int32_t index);
// The cuBLAS handle of the current device, bound to the current stream.
void* CurrentCublasHandle();
void SynchronizeCudaStream(void* stream, int32_t device_index);
// "" for cudaSuccess, else CUDA's name and description of `err`.
std::string CudaErrorMessage(int32_t err);

}  // namespace opreg::torch_stable
