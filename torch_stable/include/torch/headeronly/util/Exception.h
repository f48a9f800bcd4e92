// opreg::torch_stable: <torch/headeronly/util/Exception.h>. STD_TORCH_CHECK(cond, msg...) throws
// std::runtime_error with the message pieces streamed together, as torch's header-only check
// does; a kernel's error then reaches the caller through the runtime (opreg names the op).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "../macros/Macros.h"

namespace torch::headeronly::detail {

inline void StreamAll(std::ostringstream&) {}
template <class T, class... Rest>
void StreamAll(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  StreamAll(os, rest...);
}

template <class... Args>
[[noreturn]] C10_NOINLINE void ThrowCheckFailure(const char* cond, const char* file, int line,
                                                 const Args&... args) {
  std::ostringstream os;
  if constexpr (sizeof...(Args) == 0) {
    os << "Expected " << cond << " to be true, but got false.";
  } else {
    StreamAll(os, args...);
  }
  (void)file;
  (void)line;
  throw std::runtime_error(os.str());
}

}  // namespace torch::headeronly::detail

#define STD_TORCH_CHECK_MSG(cond, type, ...) (#cond)

// An if-statement, as torch's: code that omits the semicolon after it compiles too.
#define STD_TORCH_CHECK(cond, ...)                                                        \
  if (C10_UNLIKELY(!(cond))) {                                                            \
    ::torch::headeronly::detail::ThrowCheckFailure(#cond, __FILE__, __LINE__, ##__VA_ARGS__); \
  }
