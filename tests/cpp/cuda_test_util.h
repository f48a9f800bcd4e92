// Shared by the [cuda] tests: why no CUDA device is usable, and the skip macro. Every [cuda]
// case starts with OPREG_SKIP_WITHOUT_CUDA(), so on machines without a usable device (a build
// without CUDA, no driver, no GPU: any error from cudaGetDeviceCount) it warns
// "SKIPPED: no CUDA device (<reason>)" and passes.
#pragma once

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "opreg/core/allocator.h"

#if defined(OPREG_TEST_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace opreg_test {

inline std::string NoCudaReason() {
#if defined(OPREG_TEST_HAVE_CUDA)
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    std::ostringstream os;
    os << "cudaGetDeviceCount: " << cudaGetErrorName(err) << ": " << cudaGetErrorString(err);
    return os.str();
  }
  return "cudaGetDeviceCount reports 0 devices";
#else
  return "opreg was built without CUDA (OPREG_BUILD_CUDA=OFF)";
#endif
}

}  // namespace opreg_test

#define OPREG_SKIP_WITHOUT_CUDA()                                             \
  do {                                                                        \
    if (!opreg::CudaAvailable()) {                                            \
      WARN("SKIPPED: no CUDA device (" << opreg_test::NoCudaReason() << ")"); \
      return;                                                                 \
    }                                                                         \
  } while (false)
