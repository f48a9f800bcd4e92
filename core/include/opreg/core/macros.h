// Portability macros shared by every opreg header.
#pragma once

// OPREG_HOST_DEVICE marks small inline functions (dtype conversions) that must be callable both
// from host code and from CUDA device code. Outside nvcc it expands to nothing.
#if defined(__CUDACC__)
#define OPREG_HOST_DEVICE __host__ __device__
#else
#define OPREG_HOST_DEVICE
#endif

// Branch hints for error checks: failures are cold.
#if defined(__GNUC__) || defined(__clang__)
#define OPREG_LIKELY(x) (__builtin_expect(static_cast<bool>(x), 1))
#define OPREG_UNLIKELY(x) (__builtin_expect(static_cast<bool>(x), 0))
#else
#define OPREG_LIKELY(x) (x)
#define OPREG_UNLIKELY(x) (x)
#endif
