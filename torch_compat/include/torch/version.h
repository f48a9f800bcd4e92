// opreg::torch_compat: libtorch's <torch/version.h>. The numbers are the libtorch API level
// whose kernel-facing subset torch_compat provides (docs/torch_compat.md), not an installed
// torch.
#pragma once

#define TORCH_VERSION_MAJOR 2
#define TORCH_VERSION_MINOR 9
#define TORCH_VERSION_PATCH 0
#define TORCH_VERSION "2.9.0"
#define OPREG_TORCH_COMPAT 1
