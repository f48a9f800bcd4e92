#pragma once

// Element-type dispatch for the kernels of this library: float, half and bfloat16 activations,
// the pattern kernel libraries build on AT_DISPATCH_SWITCH / AT_DISPATCH_CASE.

#include <torch/all.h>

#define COMPAT_DISPATCH_CASE_FLOATING_TYPES(...)        \
  AT_DISPATCH_CASE(at::ScalarType::Float, __VA_ARGS__)  \
  AT_DISPATCH_CASE(at::ScalarType::Half, __VA_ARGS__)   \
  AT_DISPATCH_CASE(at::ScalarType::BFloat16, __VA_ARGS__)

#define COMPAT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, COMPAT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))
