// Builds without CUDA (OPREG_BUILD_CUDA=OFF): every CUDA call of the stable shim fails saying so.
#include "cuda_runtime_calls.h"
#include "opreg/core/error.h"

namespace opreg::torch_stable {
namespace {
[[noreturn]] void NoCuda(const char* what) {
  OPREG_THROW(kNotImplemented, what, ": opreg was built without CUDA (OPREG_BUILD_CUDA=OFF)");
}
}  // namespace

int32_t CurrentCudaDeviceIndex() { NoCuda("the current CUDA device"); }
void SetCurrentCudaDeviceIndex(int32_t) { NoCuda("setting the CUDA device"); }
void* CurrentCublasHandle() { NoCuda("the cuBLAS handle"); }
void SynchronizeCudaStream(void*, int32_t) { NoCuda("synchronizing a CUDA stream"); }
std::string CudaErrorMessage(int32_t err) {
  return err == 0 ? std::string()
                  : "CUDA error " + std::to_string(err) + " (opreg was built without CUDA)";
}

}  // namespace opreg::torch_stable
