// Private: the per-device allocator singletons that GetAllocator() dispatches to. Each lives in
// its own file; cuda_allocator.cc or cuda_allocator_stub.cc is chosen by CMake.
#pragma once

#include "opreg/core/allocator.h"

namespace opreg::internal {

Allocator* CpuAllocator();
Allocator* MetaAllocator();
// `index` -1 = current device.
Allocator* CudaAllocator(int index);

}  // namespace opreg::internal
