// opreg::torch_stable: the C types of torch's stable ABI (<torch/csrc/inductor/aoti_torch/c/
// macros.h>), written for opreg with the same names, layouts and values, so that a binary built
// against these headers and one built against torch's exchange the same handles and codes.
//
// Handles are opaque pointers; AOTITorchError is 0 (AOTI_TORCH_SUCCESS) or 1 (AOTI_TORCH_FAILURE).
#ifndef AOTI_TORCH_MACRO_H
#define AOTI_TORCH_MACRO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __GNUC__
#define AOTI_TORCH_EXPORT __attribute__((__visibility__("default")))
#else
#define AOTI_TORCH_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;
struct AtenGeneratorOpaque;
using AtenGeneratorHandle = AtenGeneratorOpaque*;
struct AOTIProxyExecutorOpaque;
using AOTIProxyExecutorHandle = AOTIProxyExecutorOpaque*;
struct C10IValueOpaque;
using C10IValueHandle = C10IValueOpaque*;

using AOTITorchError = int32_t;
#define AOTI_TORCH_SUCCESS 0
#define AOTI_TORCH_FAILURE 1

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // AOTI_TORCH_MACRO_H
