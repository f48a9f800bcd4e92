// CUDA device and stream settings for Python: opreg.cuda wraps these. Streams cross as integers
// (a cudaStream_t's value, what torch.cuda.Stream.cuda_stream gives), so the module needs no
// CUDA headers and works the same in builds without CUDA.
#include <cstdint>

#include "module_internal.h"
#include "opreg/core/allocator.h"
#include "opreg/core/cuda_stream.h"

namespace opreg::python {

void InitCuda(py::module_& m) {
  m.def("_cuda_device_count", &CudaDeviceCount,
        "Visible CUDA devices; 0 without a driver, a device or a CUDA build.");
  m.def(
      "_cuda_current_stream",
      [](int device) { return reinterpret_cast<uintptr_t>(CurrentCudaStream(device)); },
      py::arg("device"), "This thread's current stream on `device` (0: the legacy stream).");
  m.def(
      "_cuda_set_stream",
      [](int device, uintptr_t stream) {
        SetCurrentCudaStream(device, reinterpret_cast<CudaStreamHandle>(stream));
      },
      py::arg("device"), py::arg("stream"),
      "Makes `stream` (a cudaStream_t value) this thread's current stream on `device`.");
}

}  // namespace opreg::python
