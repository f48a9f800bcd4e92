// Allocators: CPU alignment and counters, meta, CUDA reporting no device on this machine.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "opreg/core/allocator.h"
#include "opreg/core/error.h"
#include "opreg/core/storage.h"

using opreg::AllocatorStats;
using opreg::DataPtr;
using opreg::Device;
using opreg::DeviceType;

TEST_CASE("cpu allocator: alignment, zero bytes, counters") {
  opreg::Allocator* cpu = opreg::GetAllocator(DeviceType::kCPU);
  REQUIRE(cpu == opreg::GetAllocator(Device::cpu()));
  CHECK(cpu->device() == Device::cpu());
  const AllocatorStats before = opreg::GetCpuAllocatorStats();
  {
    std::vector<DataPtr> ptrs;
    for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}, size_t{1 << 20}}) {
      ptrs.push_back(cpu->Allocate(n));
      DataPtr& p = ptrs.back();
      REQUIRE(p.get() != nullptr);  // Zero-byte allocations are valid and non-null.
      CHECK(reinterpret_cast<uintptr_t>(p.get()) % 64 == 0);
      CHECK(p.device() == Device::cpu());
      if (n > 0) std::memset(p.get(), 0xab, n);  // Writable (ASan checks the bounds).
    }
    const AllocatorStats during = opreg::GetCpuAllocatorStats();
    CHECK(during.allocations - before.allocations == 6);
    CHECK(during.frees == before.frees);
    CHECK(during.bytes_live - before.bytes_live == 0 + 1 + 63 + 64 + 1000 + (1 << 20));
  }
  const AllocatorStats after = opreg::GetCpuAllocatorStats();
  CHECK(after.frees - before.frees == 6);
  CHECK(after.bytes_live == before.bytes_live);
}

TEST_CASE("DataPtr is move-only and frees exactly once") {
  static int frees = 0;
  frees = 0;
  int dummy = 0;
  {
    DataPtr a(
        &dummy, &dummy, [](void*) { ++frees; }, Device::cpu());
    DataPtr b(std::move(a));
    CHECK(a.get() == nullptr);
    CHECK(b.get() == &dummy);
    DataPtr c;
    c = std::move(b);
    CHECK(frees == 0);
    c = DataPtr();  // Reassignment frees the old block.
    CHECK(frees == 1);
  }
  CHECK(frees == 1);
  static_assert(!std::is_copy_constructible_v<DataPtr>);
}

TEST_CASE("storage shares one buffer") {
  const AllocatorStats before = opreg::GetCpuAllocatorStats();
  {
    opreg::Storage s = opreg::Storage::Allocate(128, opreg::GetAllocator(DeviceType::kCPU));
    CHECK(s.nbytes() == 128);
    CHECK(s.use_count() == 1);
    opreg::Storage t = s;
    CHECK(s.use_count() == 2);
    CHECK(s.is_same(t));
    CHECK(t.data() == s.data());
    CHECK_FALSE(s.is_same(opreg::Storage()));
  }
  CHECK(opreg::GetCpuAllocatorStats().bytes_live == before.bytes_live);
}

TEST_CASE("cpu allocator counters are thread-safe") {
  const AllocatorStats before = opreg::GetCpuAllocatorStats();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 1000; ++i) opreg::GetAllocator(DeviceType::kCPU)->Allocate(16);
    });
  }
  for (auto& t : threads) t.join();
  const AllocatorStats after = opreg::GetCpuAllocatorStats();
  CHECK(after.allocations - before.allocations == 4000);
  CHECK(after.frees - before.frees == 4000);
  CHECK(after.bytes_live == before.bytes_live);
}

TEST_CASE("meta allocator has no memory") {
  const AllocatorStats before = opreg::GetCpuAllocatorStats();
  opreg::Allocator* meta = opreg::GetAllocator(DeviceType::kMeta);
  DataPtr p = meta->Allocate(1 << 30);
  CHECK(p.get() == nullptr);
  CHECK(p.device() == Device::meta());
  CHECK(meta->device() == Device::meta());
  CHECK(opreg::GetCpuAllocatorStats().allocations == before.allocations);
}

TEST_CASE("cuda entry points report no device here without crashing") {
  // This machine has no GPU (and the build may have no CUDA at all): the count is 0 either way.
  if (opreg::CudaAvailable()) {
    SUCCEED("a CUDA device is present; the no-device checks do not apply");
    return;
  }
  CHECK(opreg::CudaDeviceCount() == 0);
  CHECK(opreg::CudaDeviceCount() == 0);  // Repeated calls stay well-behaved.
  try {
    opreg::GetAllocator(DeviceType::kCUDA);
    FAIL("expected an error");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kNotImplemented);
    const std::string m = e.message();
    const bool stub = m == "CUDA allocator: opreg was built without CUDA (OPREG_BUILD_CUDA=OFF)";
    const bool real = m == "CUDA allocator: no CUDA device is available";
    CHECK((stub || real));
  }
  CHECK_THROWS_AS(opreg::GetAllocator(Device::cuda(0)), opreg::Error);
}
