#include "opreg/core/allocator.h"

#include <utility>

#include "allocator_internal.h"
#include "opreg/core/error.h"

namespace opreg {

Allocator* GetAllocator(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU:
      return internal::CpuAllocator();
    case DeviceType::kMeta:
      return internal::MetaAllocator();
    case DeviceType::kCUDA:
      return internal::CudaAllocator(-1);
  }
  OPREG_THROW(kValue, "GetAllocator(): unknown device type ", static_cast<int>(type));
}

Allocator* GetAllocator(Device device) {
  if (device.type == DeviceType::kCUDA) return internal::CudaAllocator(device.index);
  return GetAllocator(device.type);
}

}  // namespace opreg
