// opreg::torch_stable: <torch/csrc/stable/macros.h>. STABLE_TORCH_ERROR_CODE_CHECK(call) throws
// std::runtime_error with the runtime's message when a shim call fails; STD_CUDA_CHECK and
// STD_CUDA_KERNEL_LAUNCH_CHECK check CUDA calls through the shim (message from the runtime).
#pragma once

#include <stdexcept>
#include <string>

#include "../../headeronly/macros/Macros.h"
#include "../../headeronly/util/shim_utils.h"
#include "c/shim.h"

#define STABLE_TORCH_ERROR_CODE_CHECK(call) TORCH_ERROR_CODE_CHECK(call)

#define STD_CUDA_CHECK(EXPR)                                                               \
  do {                                                                                     \
    const auto opreg_stable_err = (EXPR);                                                  \
    char* opreg_stable_msg = nullptr;                                                      \
    torch_c10_cuda_check_msg(static_cast<int32_t>(opreg_stable_err), __FILE__, __func__,   \
                             static_cast<uint32_t>(__LINE__), true, &opreg_stable_msg);    \
    if (opreg_stable_msg != nullptr) {                                                     \
      std::string opreg_stable_text(opreg_stable_msg);                                     \
      torch_c10_cuda_free_error_msg(opreg_stable_msg);                                     \
      throw std::runtime_error(opreg_stable_text);                                         \
    }                                                                                      \
  } while (0)

#define STD_CUDA_KERNEL_LAUNCH_CHECK() STD_CUDA_CHECK(cudaGetLastError())
