// Tensor::is_pinned: whether the CUDA runtime knows the tensor's host memory as page-locked.
#include <cuda_runtime_api.h>

#include "opreg/torch_compat/tensor.h"

namespace at {

bool Tensor::is_pinned() const {
  if (!is_cpu() || t_.storage().data() == nullptr) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, t_.storage().data()) != cudaSuccess) {
    cudaGetLastError();  // an unregistered pointer is an answer ("no"), not an error to keep
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

}  // namespace at
