// getCurrentCUDABlasHandle: one cuBLAS handle per thread and device (cuBLAS handles are not
// meant to be shared across threads that set different streams), rebound to the caller's
// current stream on every call, as libtorch's is.
#include <array>
#include <memory>

#include "opreg/torch_compat/cuda.h"

namespace c10::cuda {
namespace {

struct ThreadHandles {
  std::array<cublasHandle_t, 64> handles{};
  ~ThreadHandles() {
    for (cublasHandle_t h : handles) {
      if (h != nullptr) cublasDestroy(h);  // errors at process teardown are not actionable
    }
  }
};

}  // namespace

cublasHandle_t getCurrentCUDABlasHandle() {
  thread_local ThreadHandles per_thread;
  const DeviceIndex device = current_device();
  TORCH_CHECK_INDEX(device >= 0 && device < static_cast<int>(per_thread.handles.size()),
                    "getCurrentCUDABlasHandle(): device ", static_cast<int>(device),
                    " is out of range");
  cublasHandle_t& handle = per_thread.handles[device];
  if (handle == nullptr) {
    const cublasStatus_t status = cublasCreate(&handle);
    TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, "cublasCreate failed on device ",
                static_cast<int>(device), ": ", cublasGetStatusString(status));
  }
  const cublasStatus_t status = cublasSetStream(handle, getCurrentCUDAStream(device).stream());
  TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS,
              "cublasSetStream failed: ", cublasGetStatusString(status));
  return handle;
}

}  // namespace c10::cuda
