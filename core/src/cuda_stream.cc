// Thread-local current streams. Plain storage with no CUDA calls, so CPU-only builds keep the
// API (a stream set there is simply never used).
#include "opreg/core/cuda_stream.h"

#include <array>

#include "opreg/core/error.h"

namespace opreg {
namespace {

std::array<CudaStreamHandle, kMaxCudaDevices>& Streams() {
  thread_local std::array<CudaStreamHandle, kMaxCudaDevices> streams{};
  return streams;
}

void CheckDevice(const char* fn, int device) {
  OPREG_CHECK_VALUE(device >= 0 && device < kMaxCudaDevices, fn, ": CUDA device index ", device,
                    " is out of range [0, ", kMaxCudaDevices, ")");
}

}  // namespace

CudaStreamHandle CurrentCudaStream(int device) {
  CheckDevice("CurrentCudaStream", device);
  return Streams()[static_cast<size_t>(device)];
}

void SetCurrentCudaStream(int device, CudaStreamHandle stream) {
  CheckDevice("SetCurrentCudaStream", device);
  Streams()[static_cast<size_t>(device)] = stream;
}

}  // namespace opreg
