#pragma once

// Registration helpers in the style of vLLM's csrc/core/registration.h: the library namespace
// comes from the build (TORCH_EXTENSION_NAME), so the macros must expand it before
// TORCH_LIBRARY pastes it into identifiers.

#define _CONCAT(A, B) A##B
#define CONCAT(A, B) _CONCAT(A, B)

#define _STRINGIFY(A) #A
#define STRINGIFY(A) _STRINGIFY(A)

#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) \
  TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)
