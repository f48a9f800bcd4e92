// CUDA entry points for builds with OPREG_BUILD_CUDA=OFF: report "no device" where a count is
// asked for, and refuse plainly where CUDA memory is needed.
#include "allocator_internal.h"
#include "opreg/core/allocator.h"
#include "opreg/core/cuda_device_guard.h"
#include "opreg/core/error.h"

namespace opreg {

CudaDeviceGuard::CudaDeviceGuard(int device) {
  OPREG_CHECK_NOT_IMPLEMENTED(device < 0, "CudaDeviceGuard(", device,
                              "): opreg was built without CUDA (OPREG_BUILD_CUDA=OFF)");
}
CudaDeviceGuard::~CudaDeviceGuard() = default;

int CudaDeviceCount() { return 0; }

bool CudaAvailable() { return false; }

void CudaMemcpy(void* /*dst*/, const void* /*src*/, size_t /*nbytes*/, int /*device*/) {
  OPREG_THROW(kNotImplemented, "CudaMemcpy(): opreg was built without CUDA (OPREG_BUILD_CUDA=OFF)");
}

namespace internal {
Allocator* CudaAllocator(int /*index*/) {
  OPREG_THROW(kNotImplemented,
              "CUDA allocator: opreg was built without CUDA (OPREG_BUILD_CUDA=OFF)");
}
}  // namespace internal

}  // namespace opreg
