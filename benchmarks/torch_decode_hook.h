// The seam between bench_kernels (C++17, no torch headers) and its optional libtorch
// comparison (torch_ext/bench_kernels_torch.cc, C++20, linked only with OPREG_BENCH_TORCH),
// which fills the hook when it is loaded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace bench_kernels {

struct TorchDecode {
  // A closure calling torch's equivalent of `op` ("add", "rms_norm", ...) on rows x hidden
  // inputs of `dtype` ("f32", "bf16", "f16"), its tensors made once; empty when torch has none.
  std::function<std::function<void()>(const std::string& op, const std::string& dtype,
                                      int64_t rows, int64_t hidden)>
      make;
  std::string version;  // torch's version, for the table's header
};

// Empty `make` when bench_kernels was built without torch.
TorchDecode& TorchDecodeHook();

}  // namespace bench_kernels
