// How every C function of the stable ABI reports failure: it runs its body under ShimGuard, which
// turns any exception into AOTI_TORCH_FAILURE and keeps the message for
// torch_exception_get_what() on this thread (a C caller has no other way to learn it).
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "../include/torch/csrc/inductor/aoti_torch/c/macros.h"

namespace opreg::torch_stable {

// The message of the last failed call on this thread ("" before any failed). A success leaves
// it alone: callers read it right after a call that failed.
std::string& LastError();

// Runs `body` (returning void); AOTI_TORCH_SUCCESS, or AOTI_TORCH_FAILURE with the message kept,
// prefixed with `function` so the caller's generic "API call failed" can be traced to the call.
template <class Body>
AOTITorchError ShimGuard(const char* function, Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return AOTI_TORCH_SUCCESS;
  } catch (const std::exception& e) {
    try {
      LastError() = std::string(function) + ": " + e.what();
    } catch (...) {
    }
  } catch (...) {
    try {
      LastError() = std::string(function) + ": unknown exception";
    } catch (...) {
    }
  }
  return AOTI_TORCH_FAILURE;
}

}  // namespace opreg::torch_stable
