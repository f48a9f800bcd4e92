// CheckCudaRt: turns a failed CUDA runtime call into an opreg::Error (kRuntime) naming it
// (private to symm_mem/cuda/src; the device guard is opreg::CudaDeviceGuard).
#pragma once

#include <cuda_runtime_api.h>

#include <string_view>

#include "opreg/core/error.h"

namespace opreg::symm_mem::cuda {

// Throws opreg::Error (kRuntime) "symm_mem (cuda): <what> failed: <name>: <text>".
inline void CheckCudaRt(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  OPREG_THROW(kRuntime, "symm_mem (cuda): ", what, " failed: ", cudaGetErrorName(err), ": ",
              cudaGetErrorString(err));
}

}  // namespace opreg::symm_mem::cuda
