// opreg::torch_stable: <torch/headeronly/util/shim_utils.h>. TORCH_ERROR_CODE_CHECK(call) throws
// std::runtime_error when a C shim call fails; the message is the runtime's (what failed and
// why, from torch_exception_get_what) after the call's text and location.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "../macros/Macros.h"

#define TORCH_SUCCESS 0
#define TORCH_FAILURE 1

// Weak: a binary built against these headers still loads into a torch older than 2.13, which
// lacks it (the message then has no detail).
extern "C" __attribute__((weak)) const char* torch_exception_get_what();

namespace torch::headeronly::detail {

[[noreturn]] C10_NOINLINE inline void throw_exception(const char* call, const char* file,
                                                      long line) {
  std::ostringstream ss;
  const char* what = torch_exception_get_what != nullptr ? torch_exception_get_what() : nullptr;
  ss << call << " API call failed at " << file << ", line " << line;
  if (what != nullptr && what[0] != '\0') ss << ": " << what;
  throw std::runtime_error(ss.str());
}

}  // namespace torch::headeronly::detail

#define TORCH_ERROR_CODE_CHECK(call)                                       \
  if ((call) != TORCH_SUCCESS) {                                           \
    torch::headeronly::detail::throw_exception(#call, __FILE__, __LINE__); \
  }
