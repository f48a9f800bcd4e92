// The CPU allocator: 64-byte aligned host memory with process-wide counters.
#include <atomic>
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

// Each block starts with one alignment unit holding its size, so the deleter (which only gets
// the context pointer) can keep bytes_live exact without a side table. The data follows at
// block + kCpuAlignment, so it keeps the block's alignment, and zero-byte allocations still
// return a unique, non-null pointer.
struct BlockHeader {
  size_t nbytes;
};
static_assert(sizeof(BlockHeader) <= kCpuAlignment, "header must fit in the alignment padding");

void FreeBlock(void* block) {
  const size_t nbytes = static_cast<BlockHeader*>(block)->nbytes;
  std::free(block);
  g_frees.fetch_add(1, std::memory_order_relaxed);
  g_bytes_live.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
}

class CpuAllocatorImpl final : public Allocator {
 public:
  DataPtr Allocate(size_t nbytes) override {
    OPREG_CHECK(nbytes <= std::numeric_limits<size_t>::max() - kCpuAlignment,
                "CPU allocator: cannot allocate ", nbytes, " bytes (size overflow)");
    void* block = nullptr;
    if (posix_memalign(&block, kCpuAlignment, nbytes + kCpuAlignment) != 0) {
      OPREG_THROW(kRuntime, "CPU allocator: out of memory allocating ", nbytes, " bytes");
    }
    static_cast<BlockHeader*>(block)->nbytes = nbytes;
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    g_bytes_live.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
    return DataPtr(static_cast<char*>(block) + kCpuAlignment, block, &FreeBlock, Device::cpu());
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
