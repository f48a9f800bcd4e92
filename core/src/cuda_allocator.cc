// The CUDA allocator (builds with OPREG_BUILD_CUDA=ON): stream-ordered cudaMallocAsync /
// cudaFreeAsync from each device's default memory pool, which does the caching. Blocks are
// allocated on the thread's current stream (cuda_stream.h) and freed on that same stream, so the
// pool reuses a block only after the work queued there before the free (PyTorch's rule: a tensor
// used on another stream must be kept alive by the caller until that stream is done). Host
// runtime code only (no kernels), so this is a .cc file linked against CUDA::cudart.
#include <cuda_runtime_api.h>

#include <array>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "allocator_internal.h"
#include "opreg/core/allocator.h"
#include "opreg/core/cuda_device_guard.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/core/error.h"

namespace opreg {
namespace {

// "cudaMallocAsync(...) failed: out of memory (cudaErrorMemoryAllocation)".
std::string CudaErrorText(cudaError_t err) {
  return StrCat(cudaGetErrorString(err), " (", cudaGetErrorName(err), ")");
}

#define OPREG_CUDA_CHECK_(expr, what)                                    \
  do {                                                                   \
    const cudaError_t err_ = (expr);                                     \
    if (err_ != cudaSuccess) {                                           \
      (void)cudaGetLastError(); /* Clear the sticky-free error state. */ \
      OPREG_THROW(kRuntime, what, " failed: ", CudaErrorText(err_));     \
    }                                                                    \
  } while (false)

// The deleter gets only the context, so it carries the device the block belongs to.
struct CudaBlock {
  void* ptr;
  int device;
  cudaStream_t stream;  // the stream it was allocated on
};

void FreeCudaBlock(void* context) {
  std::unique_ptr<CudaBlock> block(static_cast<CudaBlock*>(context));
  // Errors here cannot be reported (deleters must not throw); during process teardown the
  // driver may already be gone, which is harmless.
  try {
    CudaDeviceGuard guard(block->device);  // frees from any thread go to the block's device
    if (cudaFreeAsync(block->ptr, block->stream) != cudaSuccess) (void)cudaGetLastError();
  } catch (const Error&) {
  }
}

class CudaAllocatorImpl final : public Allocator {
 public:
  explicit CudaAllocatorImpl(int device) : device_(device) {}

  DataPtr Allocate(size_t nbytes) override {
    const Device device = Device::cuda(device_);
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, device);
    CudaDeviceGuard guard(device_);
    void* ptr = nullptr;
    // The pool makes this cheap after warm-up.
    auto stream = static_cast<cudaStream_t>(CurrentCudaStream(device_));
    OPREG_CUDA_CHECK_(cudaMallocAsync(&ptr, nbytes, stream),
                      StrCat("cudaMallocAsync(", nbytes, " bytes) on cuda:", device_));
    return DataPtr(ptr, new CudaBlock{ptr, device_, stream}, &FreeCudaBlock, device);
  }
  Device device() const override { return Device::cuda(device_); }

 private:
  int device_;
};

}  // namespace

CudaDeviceGuard::CudaDeviceGuard(int device) {
  if (device < 0) return;
  OPREG_CUDA_CHECK_(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) {
    OPREG_CUDA_CHECK_(cudaSetDevice(device), StrCat("cudaSetDevice(", device, ")"));
    restore_ = true;
  }
}

CudaDeviceGuard::~CudaDeviceGuard() {
  if (restore_ && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // No driver / no device: not an error for callers.
    return 0;
  }
  return count;
}

bool CudaAvailable() { return CudaDeviceCount() > 0; }

void CudaMemcpy(void* dst, const void* src, size_t nbytes, int device) {
  if (nbytes == 0) return;
  if (device < 0) OPREG_CUDA_CHECK_(cudaGetDevice(&device), "cudaGetDevice");
  CudaDeviceGuard guard(device);
  // Ordered after the work queued on the current stream (which may be a non-blocking stream
  // that a plain cudaMemcpy, on the legacy stream, would not wait for), then waited for.
  auto stream = static_cast<cudaStream_t>(CurrentCudaStream(device));
  OPREG_CUDA_CHECK_(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, stream),
                    StrCat("cudaMemcpyAsync(", nbytes, " bytes) on cuda:", device));
  OPREG_CUDA_CHECK_(cudaStreamSynchronize(stream),
                    StrCat("cudaStreamSynchronize after a copy on cuda:", device));
}

namespace internal {

Allocator* CudaAllocator(int index) {
  const int count = CudaDeviceCount();
  OPREG_CHECK_NOT_IMPLEMENTED(count > 0, "CUDA allocator: no CUDA device is available");
  if (index < 0) {
    OPREG_CUDA_CHECK_(cudaGetDevice(&index), "cudaGetDevice");
  }
  OPREG_CHECK_VALUE(index < count && index < kMaxCudaDevices, "CUDA allocator: device index ",
                    index, " out of range (", count, " CUDA devices)");
  static std::array<std::unique_ptr<CudaAllocatorImpl>, kMaxCudaDevices>* allocators =
      new std::array<std::unique_ptr<CudaAllocatorImpl>, kMaxCudaDevices>();
  static std::once_flag once[kMaxCudaDevices];
  std::call_once(once[index],
                 [&] { (*allocators)[index] = std::make_unique<CudaAllocatorImpl>(index); });
  return (*allocators)[index].get();
}

}  // namespace internal
}  // namespace opreg
