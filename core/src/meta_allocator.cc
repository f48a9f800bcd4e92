// The meta allocator: shapes without memory. Every allocation is a null, unowned DataPtr on the
// meta device (each tensor still gets its own StorageImpl, so aliasing stays observable).
#include "allocator_internal.h"
#include "opreg/core/allocator.h"

namespace opreg {
namespace {

class MetaAllocatorImpl final : public Allocator {
 public:
  DataPtr Allocate(size_t /*nbytes*/) override {
    return DataPtr(nullptr, nullptr, nullptr, Device::meta());
  }
  Device device() const override { return Device::meta(); }
};

}  // namespace

namespace internal {
Allocator* MetaAllocator() {
  static MetaAllocatorImpl* allocator = new MetaAllocatorImpl();
  return allocator;
}
}  // namespace internal
}  // namespace opreg
