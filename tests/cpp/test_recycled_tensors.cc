// RecycledTensors: a call's tensor objects are reused on the same thread, never while another
// handle holds them, and the memory's owner is released when the call gives them back.
#include <catch2/catch.hpp>
#include <cstdint>
#include <thread>
#include <vector>

#include "opreg/core/recycled_tensors.h"
#include "opreg/core/tensor_factories.h"

using opreg::Device;
using opreg::DType;
using opreg::RecycledTensors;
using opreg::RecycleScope;
using opreg::Tensor;

namespace {

void CountRelease(void* context) { ++*static_cast<int*>(context); }

// Drains this thread's cache so each test starts from an empty one.
void Drain() {
  std::vector<float> d(1);
  std::vector<Tensor> held;
  while (RecycledTensors::CachedOnThisThread() > 0) {
    held.push_back(RecycledTensors::FromBlob(d.data(), {1}, {1}, DType::kFloat32, Device::cpu(),
                                             nullptr, nullptr));
  }
}

TEST_CASE("a given-back tensor releases its owner at once and is reused", "[recycled]") {
  Drain();
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b(12, 7.0f);
  int released_a = 0, released_b = 0;
  const opreg::TensorImpl* first = nullptr;
  {
    RecycleScope scope;
    Tensor t = RecycledTensors::FromBlob(a.data(), {2, 3}, {3, 1}, DType::kFloat32,
                                         Device::cpu(), &released_a, &CountRelease);
    scope.Keep(t);
    first = t.unsafe_get_impl();
    CHECK(t.is_contiguous());
  }
  CHECK(released_a == 1);
  CHECK(RecycledTensors::CachedOnThisThread() == 1);
  // The next tensor reuses the objects, with every field of the new layout.
  Tensor u = RecycledTensors::FromBlob(b.data(), {4, 2}, {1, 4}, DType::kFloat32, Device::cpu(),
                                       &released_b, &CountRelease);
  CHECK(u.unsafe_get_impl() == first);
  CHECK(RecycledTensors::CachedOnThisThread() == 0);
  CHECK(u.sizes() == opreg::IntArrayRef({4, 2}));
  CHECK(u.strides() == opreg::IntArrayRef({1, 4}));
  CHECK(u.numel() == 8);
  CHECK_FALSE(u.is_contiguous());
  CHECK(u.storage_offset() == 0);
  CHECK(u.data_ptr() == b.data());
  CHECK(u.storage().nbytes() == 8 * sizeof(float));
  CHECK(u.data_ptr<float>()[0] == 7.0f);
  u = Tensor();
  CHECK(released_b == 1);  // not given back: destroyed as any tensor
  CHECK(released_a == 1);
}

TEST_CASE("a tensor someone kept is never recycled", "[recycled]") {
  Drain();
  std::vector<float> a(4, 1.0f);
  int released = 0;
  Tensor kept, view;
  {
    RecycleScope scope;
    Tensor t = RecycledTensors::FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(),
                                         &released, &CountRelease);
    scope.Keep(t);
    kept = t;
  }
  CHECK(RecycledTensors::CachedOnThisThread() == 0);
  CHECK(released == 0);
  CHECK(kept.data_ptr() == a.data());
  {
    RecycleScope scope;
    Tensor t = RecycledTensors::FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(),
                                         &released, &CountRelease);
    scope.Keep(t);
    view = t.narrow(0, 1, 2);  // shares the storage, not the TensorImpl
  }
  CHECK(RecycledTensors::CachedOnThisThread() == 0);
  CHECK(released == 0);
  kept = Tensor();
  view = Tensor();
  CHECK(released == 2);
}

TEST_CASE("layout errors leave the owner with the caller, cached objects untouched",
          "[recycled]") {
  Drain();
  std::vector<float> a(4);
  int released = 0;
  {
    RecycleScope scope;
    scope.Keep(RecycledTensors::FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(),
                                         &released, &CountRelease));
  }
  REQUIRE(RecycledTensors::CachedOnThisThread() == 1);
  CHECK_THROWS_WITH(RecycledTensors::FromBlob(a.data(), {2, 2}, {2, -1}, DType::kFloat32,
                                              Device::cpu(), &released, &CountRelease),
                    Catch::Contains("from_blob()") && Catch::Contains("negative stride"));
  CHECK_THROWS_WITH(RecycledTensors::FromBlob(nullptr, {4}, {1}, DType::kFloat32, Device::cpu(),
                                              &released, &CountRelease),
                    Catch::Contains("data is null"));
  // An element count that overflows before a zero size is refused as from_blob refuses it.
  const int64_t big = int64_t{1} << 31, bigger = int64_t{1} << 32;
  CHECK_THROWS_WITH(RecycledTensors::FromBlob(a.data(), {big, bigger, 0}, {bigger, 1, 1},
                                              DType::kFloat32, Device::cpu(), &released,
                                              &CountRelease),
                    Catch::Contains("2^63"));
  CHECK_THROWS_WITH(opreg::from_blob(a.data(), {big, bigger, 0}, {bigger, 1, 1}, DType::kFloat32,
                                     Device::cpu(), &released, &CountRelease),
                    Catch::Contains("2^63"));
  CHECK(released == 1);  // only the first tensor's owner
  CHECK(RecycledTensors::CachedOnThisThread() == 1);
}

TEST_CASE("a scope makes, keeps and finds its tensors", "[recycled]") {
  Drain();
  std::vector<float> a(6, 2.0f);
  int released = 0, source = 0;
  const opreg::TensorImpl* made = nullptr;
  {
    RecycleScope scope;
    Tensor t = scope.FromBlob(a.data(), {2, 3}, {3, 1}, DType::kFloat32, Device::cpu(), &released,
                              &CountRelease, &source);
    made = t.unsafe_get_impl();
    REQUIRE(scope.Find(&source) != nullptr);
    CHECK(scope.Find(&source)->unsafe_get_impl() == made);
    CHECK(scope.Find(&released) == nullptr);
    CHECK(scope.Find(nullptr) == nullptr);
    CHECK_THROWS_WITH(scope.FromBlob(nullptr, {4}, {1}, DType::kFloat32, Device::cpu(), &released,
                                     &CountRelease),
                      Catch::Contains("data is null"));
  }
  CHECK(released == 1);  // the failed FromBlob took nothing
  REQUIRE(RecycledTensors::CachedOnThisThread() == 1);
  RecycleScope scope;
  CHECK(scope.FromBlob(a.data(), {6}, {1}, DType::kFloat32, Device::cpu(), nullptr, nullptr)
            .unsafe_get_impl() == made);
}

void CountAtEnd(void* context) { *static_cast<int*>(context) += 100; }

TEST_CASE("owners given back at the end of a scope take the scope's release", "[recycled]") {
  Drain();
  std::vector<float> a(4);
  int given_back = 0, kept_owner = 0, other = 0;
  Tensor kept;
  {
    RecycleScope scope;
    scope.ReleaseAtEndWith(&CountRelease, &CountAtEnd);
    scope.FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(), &given_back,
                   &CountRelease);
    kept = scope.FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(), &kept_owner,
                          &CountRelease);
    // An owner with another release function is released by it.
    scope.FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(), &other,
                   [](void* c) { *static_cast<int*>(c) += 10; });
  }
  CHECK(given_back == 100);  // the substitute ran, once, and the usual release did not
  CHECK(other == 10);
  CHECK(kept_owner == 0);  // still in use
  kept = Tensor();
  CHECK(kept_owner == 1);  // a kept tensor dies with its own release, wherever that is
  RecycleScope scope;
  scope.ReleaseAtEndWith(&CountRelease, &CountAtEnd);
  scope.ReleaseAtEndWith(&CountAtEnd, &CountRelease);
  CHECK_THROWS_WITH(scope.ReleaseAtEndWith(&CountRelease, &CountAtEnd),
                    Catch::Contains("at most two"));
  CHECK_THROWS_WITH(scope.ReleaseAtEndWith(nullptr, &CountAtEnd), Catch::Contains("required"));
}

void CountAcquire(void* context) { *static_cast<int*>(context) += 1000; }

TEST_CASE("a scope that borrows owners takes a reference only for the tensors that outlive it",
          "[recycled]") {
  Drain();
  std::vector<float> a(4);
  int recycled = 0, kept_owner = 0, viewed = 0, read = 0;
  Tensor kept, view;
  {
    RecycleScope scope(RecycledTensors::ThisThreadCache(opreg::RecyclePool::kArguments));
    scope.BorrowOwners(&CountRelease, &CountAcquire);
    const Tensor t = scope.FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(),
                                    &recycled, &CountRelease, &recycled);
    kept = scope.FromBlob(a.data(), {2, 2}, {2, 1}, DType::kFloat32, Device::cpu(),
                          &kept_owner, &CountRelease, &kept_owner);
    // A view shares the storage, so its base's owner must outlive the scope too.
    view = scope.FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(), &viewed,
                          &CountRelease, &viewed).narrow(0, 1, 2);
    // An owner with another release function is not borrowed: released as usual.
    scope.FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(), &read,
                   [](void* c) { *static_cast<int*>(c) += 10; });
    CHECK(scope.SourceOf(t.unsafe_get_impl()) == &recycled);
    CHECK(scope.SourceOf(kept.unsafe_get_impl()) == &kept_owner);
    CHECK(scope.SourceOf(view.unsafe_get_impl()) == nullptr);  // not one of the scope's
    CHECK(recycled + kept_owner + viewed + read == 0);  // nothing taken while the scope lasts
  }
  CHECK(recycled == 0);  // given back: neither acquired nor released
  CHECK(read == 10);
  CHECK(kept_owner == 1000);  // acquired as the scope ended...
  CHECK(viewed == 1000);
  kept = Tensor();
  view = Tensor();
  CHECK(kept_owner == 1001);  // ...and released when the tensor died
  CHECK(viewed == 1001);
  RecycleScope scope;
  scope.BorrowOwners(&CountRelease, &CountAcquire);
  scope.ReleaseAtEndWith(&CountAtEnd, &CountRelease);
  CHECK_THROWS_WITH(scope.BorrowOwners(&CountRelease, &CountAcquire),
                    Catch::Contains("at most two"));
  CHECK_THROWS_WITH(scope.BorrowOwners(&CountRelease, nullptr), Catch::Contains("required"));
}

TEST_CASE("a borrowed owner is acquired then released when the cache has no room",
          "[recycled]") {
  Drain();
  std::vector<float> a(4);
  std::vector<int> owners(40, 0);
  {
    RecycleScope scope;
    scope.BorrowOwners(&CountRelease, &CountAcquire);
    for (int& owner : owners) {
      scope.FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(), &owner, &CountRelease);
    }
  }
  int recycled = 0, dropped = 0;
  for (const int owner : owners) {
    if (owner == 0) ++recycled;
    if (owner == 1001) ++dropped;  // the reference taken for a tensor that then died at once
  }
  CHECK(recycled > 0);
  CHECK(dropped > 0);
  CHECK(recycled + dropped == 40);
}

TEST_CASE("the cache is per thread and bounded", "[recycled]") {
  Drain();
  std::vector<float> a(4);
  {
    RecycleScope scope;
    for (int i = 0; i < 40; ++i) {
      scope.Keep(RecycledTensors::FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(),
                                           nullptr, nullptr));
    }
  }
  const size_t here = RecycledTensors::CachedOnThisThread();
  CHECK(here > 0);
  CHECK(here < 40);
  size_t there = 1;
  std::thread([&] { there = RecycledTensors::CachedOnThisThread(); }).join();
  CHECK(there == 0);
}

}  // namespace

TEST_CASE("new tensors recycle through their own pool, apart from the arguments'", "[recycled]") {
  Drain();
  const auto owned = opreg::RecyclePool::kOwned;
  while (RecycledTensors::CachedOnThisThread(owned) > 0) {  // drain the owned pool too
    opreg::empty({1}, DType::kFloat32, Device::meta());  // takes one, then destroys it
  }
  const opreg::AllocatorStats before = opreg::GetCpuAllocatorStats();
  Tensor t = opreg::empty({2, 3}, DType::kFloat32, Device::cpu());
  t.data_ptr<float>()[5] = 1.0f;
  const opreg::TensorImpl* impl = t.unsafe_get_impl();
  CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % opreg::kCpuAlignment == 0);
  RecycledTensors::Give(&t, owned);  // the memory goes back to the allocator at once
  CHECK_FALSE(t.defined());
  CHECK(opreg::GetCpuAllocatorStats().bytes_live == before.bytes_live);
  CHECK(RecycledTensors::CachedOnThisThread(owned) == 1);
  CHECK(RecycledTensors::CachedOnThisThread() == 0);  // the arguments' pool is untouched
  // The next new tensor, on any device, takes the objects with the new layout.
  Tensor m = opreg::empty_strided({4, 2}, {1, 4}, DType::kFloat16, Device::meta());
  CHECK(m.unsafe_get_impl() == impl);
  CHECK(m.device().is_meta());
  CHECK(m.dtype() == DType::kFloat16);
  CHECK(m.strides() == opreg::IntArrayRef({1, 4}));
  CHECK(m.data_ptr() == nullptr);
  CHECK(RecycledTensors::CachedOnThisThread(owned) == 0);
  // A framework tensor never takes an owned tensor's objects.
  RecycledTensors::Give(&m, owned);
  std::vector<float> a(4);
  Tensor f = RecycledTensors::FromBlob(a.data(), {4}, {1}, DType::kFloat32, Device::cpu(),
                                       nullptr, nullptr);
  CHECK(f.unsafe_get_impl() != impl);
  CHECK(RecycledTensors::CachedOnThisThread(owned) == 1);
}
