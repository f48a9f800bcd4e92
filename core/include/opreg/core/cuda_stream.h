// The current CUDA stream: which stream opreg's CUDA kernels launch on and its CUDA allocator
// allocates on, per thread and per device (PyTorch's getCurrentCUDAStream model).
//
// A stream is an opaque handle (a cudaStream_t cast to void*), so this header and its
// implementation need no CUDA headers and exist in every build. The default, until a thread sets
// one, is the legacy default stream (null handle), as in PyTorch. Callers that run on their own
// streams (e.g. torch.cuda.Stream().cuda_stream from Python) set them for a scope with
// CudaStreamGuard; opreg then launches there without any implicit synchronization.
//
// Ownership: opreg never creates or destroys streams; the caller's stream must outlive the work
// and the CUDA tensors allocated while it was current (their memory is freed, stream-ordered, on
// the stream they were allocated on).
//
// Errors: a device index outside [0, kMaxCudaDevices) is an opreg::Error (kValue).
// Thread safety: the setting is thread-local; no synchronization is needed or done.
#pragma once

#include <cstdint>

namespace opreg {

// An opaque cudaStream_t; nullptr is the legacy default stream.
using CudaStreamHandle = void*;

// Upper bound on device indices whose streams can be set (matches the CUDA allocator's bound).
inline constexpr int kMaxCudaDevices = 64;

// The calling thread's current stream for CUDA device `device`.
CudaStreamHandle CurrentCudaStream(int device);
// Sets the calling thread's current stream for `device`.
void SetCurrentCudaStream(int device, CudaStreamHandle stream);

// Makes `stream` current for `device` in this thread for a scope, then restores the previous one.
class CudaStreamGuard {
 public:
  CudaStreamGuard(int device, CudaStreamHandle stream)
      : device_(device), previous_(CurrentCudaStream(device)) {
    SetCurrentCudaStream(device, stream);
  }
  ~CudaStreamGuard() { SetCurrentCudaStream(device_, previous_); }
  CudaStreamGuard(const CudaStreamGuard&) = delete;
  CudaStreamGuard& operator=(const CudaStreamGuard&) = delete;

 private:
  int device_;
  CudaStreamHandle previous_;
};

}  // namespace opreg
