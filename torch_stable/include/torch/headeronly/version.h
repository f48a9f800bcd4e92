// opreg::torch_stable: <torch/headeronly/version.h>. The stable-ABI level these headers and
// libopreg_torch_stable provide, in torch's encoding (major << 56 | minor << 48 | patch << 40).
// opreg provides the 2.11 level: every function torch's 2.11 headers call that a kernel library
// uses (docs/torch_stable.md lists them), plus the 2.13 error-message and optional-box calls.
#pragma once

#define TORCH_VERSION_MAJOR 2
#define TORCH_VERSION_MINOR 11
#define TORCH_VERSION_PATCH 0
#define TORCH_VERSION_ABI_TAG 0
#define TORCH_VERSION "2.11.0"

#define TORCH_ABI_VERSION                                                      \
  (((0ULL + TORCH_VERSION_MAJOR) << 56) | ((0ULL + TORCH_VERSION_MINOR) << 48) | \
   ((0ULL + TORCH_VERSION_PATCH) << 40) | ((0ULL + TORCH_VERSION_ABI_TAG) << 0))
