// Device memory allocators and the owning pointer they return.
//
// Every tensor's bytes come from an Allocator (or are adopted from outside by from_blob /
// FromDLPack) and are held by a DataPtr, which knows how to free them. The allocators here:
//   - CPU: 64-byte aligned host memory, with process-wide counters (GetCpuAllocatorStats) so
//     tests can assert that a planned replay makes no allocator calls.
//   - CUDA: stream-ordered cudaMallocAsync / cudaFreeAsync on the thread's current stream
//     (cuda_stream.h; the driver's pool does the caching). Only in builds with OPREG_BUILD_CUDA=ON;
//     otherwise every CUDA entry point reports "opreg was built without CUDA
//     (OPREG_BUILD_CUDA=OFF)".
//   - Meta: no memory at all; data pointers are null.
//
// Thread safety: allocators are process-wide singletons and safe to call concurrently. A DataPtr
// is a move-only owner and is not itself synchronized.
#pragma once

#include <cstddef>
#include <cstdint>

#include "opreg/core/device.h"

namespace opreg {

// An owning pointer to device memory: the data pointer, an opaque context, and the function that
// frees the context. Move-only; the deleter runs exactly once, when the owner is destroyed or
// reassigned. A null deleter means "not owned" (nothing to free).
class DataPtr {
 public:
  using DeleterFn = void (*)(void* context);

  DataPtr() = default;
  DataPtr(void* data, void* context, DeleterFn deleter, Device device)
      : data_(data), context_(context), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& other) noexcept
      : data_(other.data_), context_(other.context_), deleter_(other.deleter_),
        device_(other.device_) {
    other.data_ = nullptr;
    other.context_ = nullptr;
    other.deleter_ = nullptr;
  }
  DataPtr& operator=(DataPtr&& other) noexcept {
    if (this != &other) {
      Reset();
      data_ = other.data_;
      context_ = other.context_;
      deleter_ = other.deleter_;
      device_ = other.device_;
      other.data_ = nullptr;
      other.context_ = nullptr;
      other.deleter_ = nullptr;
    }
    return *this;
  }
  ~DataPtr() { Reset(); }

  // Leaves this DataPtr empty without running the deleter and returns the context: releasing it
  // (with deleter(), read before) is now the caller's job.
  void* ReleaseContext() {
    void* context = context_;
    deleter_ = nullptr;
    context_ = nullptr;
    data_ = nullptr;
    return context;
  }

  void* get() const { return data_; }
  void* context() const { return context_; }
  DeleterFn deleter() const { return deleter_; }
  Device device() const { return device_; }
  explicit operator bool() const { return data_ != nullptr; }

  // Frees the memory now (if owned) and leaves this DataPtr empty. The fields are cleared before
  // the deleter runs, so a throwing or re-entrant deleter can never cause a second free.
  void Reset() {
    DeleterFn deleter = deleter_;
    void* context = context_;
    deleter_ = nullptr;
    context_ = nullptr;
    data_ = nullptr;
    if (deleter != nullptr) deleter(context);
  }

 private:
  void* data_ = nullptr;
  void* context_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
};

// Interface of a per-device allocator.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns `nbytes` of memory on device(). Zero-byte requests are valid. Throws opreg::Error
  // (kRuntime) when memory cannot be obtained.
  virtual DataPtr Allocate(size_t nbytes) = 0;
  // The device this allocator serves (with a concrete index for CUDA).
  virtual Device device() const = 0;
};

// The allocator of a device type (CUDA: the current device). Never null; the pointer stays
// valid for the life of the process. CUDA in a build without CUDA throws opreg::Error
// (kNotImplemented).
Allocator* GetAllocator(DeviceType type);
// The allocator of a specific device (CUDA index -1: the current device; a CUDA index beyond
// CudaDeviceCount() throws opreg::Error (kValue)).
Allocator* GetAllocator(Device device);

// Process-wide counters of the CPU allocator (monotonic except bytes_live).
struct AllocatorStats {
  int64_t allocations = 0;  // Calls to Allocate().
  int64_t frees = 0;        // Deleter calls.
  int64_t bytes_live = 0;   // Bytes allocated and not yet freed.
};
AllocatorStats GetCpuAllocatorStats();

// Alignment of every CPU allocation.
inline constexpr size_t kCpuAlignment = 64;

// Number of visible CUDA devices; 0 on any CUDA error (no driver, no device) and in builds
// without CUDA.
int CudaDeviceCount();
// CudaDeviceCount() > 0.
bool CudaAvailable();
// Copies `nbytes` between any two of host / CUDA memory: cudaMemcpyAsync (cudaMemcpyDefault) on
// the current stream of CUDA device `device` (the device of the CUDA side), then synchronizes
// that stream, so the copy sees all work queued there. Throws opreg::Error on CUDA errors,
// kNotImplemented in builds without CUDA.
void CudaMemcpy(void* dst, const void* src, size_t nbytes, int device);

}  // namespace opreg
