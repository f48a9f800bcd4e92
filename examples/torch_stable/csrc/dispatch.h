// The element types the example's kernels take (float32, float16, bfloat16) and a switch that
// runs a templated body with `scalar_t` bound to the tensor's element type: what vLLM's
// VLLM_STABLE_DISPATCH_FLOATING_TYPES does, in plain C++ over the stable API.
#pragma once

#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/BFloat16.h>
#include <torch/headeronly/util/Exception.h>
#include <torch/headeronly/util/Half.h>

#define STABLE_EXAMPLE_DISPATCH_FLOATING(TYPE, NAME, ...)                                    \
  [&] {                                                                                      \
    switch (TYPE) {                                                                          \
      case torch::headeronly::ScalarType::Float: {                                           \
        using scalar_t = float;                                                              \
        return __VA_ARGS__();                                                                \
      }                                                                                      \
      case torch::headeronly::ScalarType::Half: {                                            \
        using scalar_t = torch::headeronly::Half;                                            \
        return __VA_ARGS__();                                                                \
      }                                                                                      \
      case torch::headeronly::ScalarType::BFloat16: {                                        \
        using scalar_t = torch::headeronly::BFloat16;                                        \
        return __VA_ARGS__();                                                                \
      }                                                                                      \
      default:                                                                               \
        STD_TORCH_CHECK(false, NAME, ": expected float32, float16 or bfloat16, got ", TYPE); \
    }                                                                                        \
  }()
