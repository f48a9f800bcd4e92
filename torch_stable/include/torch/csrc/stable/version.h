// opreg::torch_stable: <torch/csrc/stable/version.h>. TORCH_FEATURE_VERSION is the stable-ABI
// level code is compiled for: TORCH_TARGET_VERSION when the build sets it (it must not be newer
// than TORCH_ABI_VERSION, the level these headers provide), else TORCH_ABI_VERSION.
#pragma once

#include "../../headeronly/version.h"

#define TORCH_VERSION_2_9_0 (((0ULL + 2) << 56) | ((0ULL + 9) << 48))
#define TORCH_VERSION_2_10_0 (((0ULL + 2) << 56) | ((0ULL + 10) << 48))
#define TORCH_VERSION_2_11_0 (((0ULL + 2) << 56) | ((0ULL + 11) << 48))
#define TORCH_VERSION_2_12_0 (((0ULL + 2) << 56) | ((0ULL + 12) << 48))
#define TORCH_VERSION_2_13_0 (((0ULL + 2) << 56) | ((0ULL + 13) << 48))

#ifdef TORCH_TARGET_VERSION
#if TORCH_TARGET_VERSION > TORCH_ABI_VERSION
#error "TORCH_TARGET_VERSION is newer than the stable ABI level opreg's headers provide " \
       "(TORCH_ABI_VERSION in torch/headeronly/version.h)"
#endif
#define TORCH_FEATURE_VERSION TORCH_TARGET_VERSION
#else
#define TORCH_FEATURE_VERSION TORCH_ABI_VERSION
#endif
