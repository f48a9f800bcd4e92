// Host helpers shared by the CUDA launchers (see device_helpers.cuh).
#include <array>
#include <atomic>

#include "device_helpers.cuh"

namespace opreg {
namespace kernels {
namespace cuda {
namespace detail {

int MultiProcessorCount() {
  constexpr int kMaxDevices = 64;
  static std::array<std::atomic<int>, kMaxDevices> cache{};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    (void)cudaGetLastError();
    return 108;  // An A100's count: only sizes grids, never affects results.
  }
  int n = cache[device].load(std::memory_order_relaxed);
  if (n > 0) return n;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    n = 108;
  }
  cache[device].store(n, std::memory_order_relaxed);
  return n;
}

void CheckCuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();  // Clear a non-sticky error so later calls are not blamed.
  OPREG_THROW(kRuntime, what, " failed: ", cudaGetErrorString(err), " (", cudaGetErrorName(err),
              ")");
}

void CheckLaunch(const char* op) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return;
  OPREG_THROW(kRuntime, op, ": CUDA kernel launch failed: ", cudaGetErrorString(err), " (",
              cudaGetErrorName(err), ")");
}

void CheckCudaTensor(const Tensor& t, const char* op, const char* name) {
  OPREG_CHECK_VALUE(t.defined(), op, "(): '", name, "' is undefined");
  OPREG_CHECK_VALUE(t.is_cuda(), op, "(): '", name, "' must be a CUDA tensor, got ",
                    t.device().str());
}

void CheckContiguous(const Tensor& t, const char* op, const char* name) {
  OPREG_CHECK_VALUE(t.is_contiguous(), op, "(): the CUDA kernel needs a contiguous '", name,
                    "' (call contiguous() first)");
}

void CheckSameDType(const Tensor& a, const Tensor& b, const char* op, const char* name_a,
                    const char* name_b) {
  OPREG_CHECK_TYPE(a.dtype() == b.dtype(), op, "(): '", name_a, "' (", DTypeName(a.dtype()),
                   ") and '", name_b, "' (", DTypeName(b.dtype()), ") must have the same dtype");
}

}  // namespace detail
}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
