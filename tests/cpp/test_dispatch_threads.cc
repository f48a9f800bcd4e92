// Registration while other threads call ops: calls never lock, never see a torn table, and
// never run a freed kernel. Meant to run under ThreadSanitizer (OPREG_SANITIZE=thread) too.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::Dispatcher;
using opreg::DispatchKey;
using opreg::Library;
using opreg::Tensor;

int64_t Base(const Tensor& x, int64_t k) { return 1; }
int64_t Override(const Tensor& x, int64_t k) { return 2; }

TEST_CASE("calls run lock-free while kernels and ops are registered and removed", "[threads]") {
  Library lib(Library::FRAGMENT, "threads", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x, int k) -> int").impl("f", DispatchKey::kCPU, &Base);
  auto op = Dispatcher::Get().FindOpOrThrow("threads::f").typed<int64_t(const Tensor&, int64_t)>();
  auto boxed = Dispatcher::Get().FindOpOrThrow("threads::f");
  const Tensor x = opreg::zeros({2}, opreg::DType::kFloat32);

  constexpr int kCallers = 3;
  constexpr int kRounds = 300;
  std::atomic<bool> done{false};
  std::atomic<int64_t> bad{0};
  std::atomic<int64_t> calls{0};
  std::atomic<int> started{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([&, t] {
      bool counted = false;
      while (!done.load(std::memory_order_acquire)) {
        const int64_t r = t % 2 == 0
                              ? op.call(x, 1)
                              : boxed.CallBoxed({opreg::IValue(x), opreg::IValue(1)})[0].toInt();
        if (r != 1 && r != 2) bad.fetch_add(1);
        calls.fetch_add(1, std::memory_order_relaxed);
        if (!counted) {
          counted = true;
          started.fetch_add(1);
        }
        // Lookups race with the op map being copied on write.
        if (!Dispatcher::Get().FindOp("threads::f")) bad.fetch_add(1);
      }
    });
  }
  // On a loaded machine the registrations below can all finish before a caller thread first
  // runs; wait until the callers are calling so the two really overlap.
  while (started.load() < kCallers) std::this_thread::yield();
  for (int round = 0; round < kRounds; ++round) {
    Library extra(Library::FRAGMENT, "threads", std::nullopt, __FILE__, __LINE__);
    extra.impl("f", DispatchKey::kCPU, &Override);
    extra.def("g" + std::to_string(round) + "(Tensor x) -> Tensor");
  }
  done.store(true, std::memory_order_release);
  for (auto& th : callers) th.join();
  CHECK(bad.load() == 0);
  CHECK(calls.load() > 0);
  CHECK(op.call(x, 1) == 1);  // every override was removed again
}

}  // namespace
