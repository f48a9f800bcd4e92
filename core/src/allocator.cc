#include "opreg/core/allocator.h"

#include <utility>

#include "allocator_internal.h"
#include "opreg/core/error.h"

namespace opreg {

DataPtr& DataPtr::operator=(DataPtr&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
    deleter_ = std::exchange(other.deleter_, nullptr);
    device_ = other.device_;
  }
  return *this;
}

void DataPtr::Reset() {
  // Clear the fields before calling the deleter so that a throwing or re-entrant deleter can
  // never cause a second free.
  DeleterFn deleter = std::exchange(deleter_, nullptr);
  void* context = std::exchange(context_, nullptr);
  data_ = nullptr;
  if (deleter != nullptr) deleter(context);
}

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
