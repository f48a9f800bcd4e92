// The CPU allocator: 64-byte aligned host memory with process-wide counters.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "allocator_internal.h"
#include "opreg/core/allocator.h"
#include "opreg/core/error.h"

namespace opreg {
namespace {

std::atomic<int64_t> g_allocations{0};
std::atomic<int64_t> g_frees{0};
std::atomic<int64_t> g_bytes_live{0};

// A block is plain malloc memory, the data placed at the first 64-byte boundary with room for a
// header before it: the header records the block's start and the data's size, so the deleter
// (which only gets the context pointer, the header) can free the block and keep bytes_live exact
// without a side table. malloc and a little arithmetic cost less than posix_memalign, which
// splits a larger chunk and frees the pieces on each call (a measurable part of a small op's
// output allocation). Zero-byte allocations still return a unique, non-null pointer.
struct BlockHeader {
  void* block;
  size_t nbytes;
};
constexpr size_t kPadding = kCpuAlignment - 1 + sizeof(BlockHeader);

void FreeBlock(void* context) {
  const BlockHeader* header = static_cast<const BlockHeader*>(context);
  const size_t nbytes = header->nbytes;
  std::free(header->block);
  g_frees.fetch_add(1, std::memory_order_relaxed);
  g_bytes_live.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
}

class CpuAllocatorImpl final : public Allocator {
 public:
  DataPtr Allocate(size_t nbytes) override {
    OPREG_CHECK(nbytes <= std::numeric_limits<size_t>::max() - kPadding,
                "CPU allocator: cannot allocate ", nbytes, " bytes (size overflow)");
    void* block = std::malloc(nbytes + kPadding);
    if (block == nullptr) {
      OPREG_THROW(kRuntime, "CPU allocator: out of memory allocating ", nbytes, " bytes");
    }
    const uintptr_t data = (reinterpret_cast<uintptr_t>(block) + kPadding) & ~(kCpuAlignment - 1);
    auto* header = reinterpret_cast<BlockHeader*>(data) - 1;
    header->block = block;
    header->nbytes = nbytes;
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    g_bytes_live.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
    return DataPtr(reinterpret_cast<void*>(data), header, &FreeBlock, Device::cpu());
  }
  Device device() const override { return Device::cpu(); }
};

}  // namespace

namespace internal {
Allocator* CpuAllocator() {
  static CpuAllocatorImpl* allocator = new CpuAllocatorImpl();  // Never destroyed: tensors may
  return allocator;                                             // outlive static destruction.
}
}  // namespace internal

AllocatorStats GetCpuAllocatorStats() {
  AllocatorStats stats;
  stats.allocations = g_allocations.load(std::memory_order_relaxed);
  stats.frees = g_frees.load(std::memory_order_relaxed);
  stats.bytes_live = g_bytes_live.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace opreg
