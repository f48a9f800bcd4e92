// CaptureScope: ordinary C++ calls (typed and boxed) recorded on the capturing thread only,
// in-place calls renaming the caller's tensor, kernels run by the capture calling ops for real,
// no nesting, and the captured graph replaying to the eager results.
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "opreg/core/error.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"
#include "opreg/planner/capture_scope.h"
#include "opreg/planner/planned_executor.h"

namespace {

using opreg::CaptureScope;
using opreg::Dispatcher;
using opreg::DispatchKey;
using opreg::DType;
using opreg::Graph;
using opreg::IValue;
using opreg::Library;
using opreg::PlannedExecutor;
using opreg::Stack;
using opreg::Tensor;

float* F(const Tensor& t) { return t.data_ptr<float>(); }

std::atomic<int> g_cpu_calls{0};

Tensor& AddOut(const Tensor& x, const Tensor& y, Tensor& out) {
  ++g_cpu_calls;
  for (int64_t i = 0; i < x.numel(); ++i) F(out)[i] = F(x)[i] + F(y)[i];
  return out;
}
Tensor& ReluOut(const Tensor& x, Tensor& out) {
  ++g_cpu_calls;
  for (int64_t i = 0; i < x.numel(); ++i) F(out)[i] = F(x)[i] > 0 ? F(x)[i] : 0;
  return out;
}
Tensor& AddInplace(Tensor& x, const Tensor& y) {
  ++g_cpu_calls;
  for (int64_t i = 0; i < x.numel(); ++i) F(x)[i] += F(y)[i];
  return x;
}

struct Ops {
  Library lib{Library::FRAGMENT, "cs", std::nullopt, "cs.cc", 1};
  Library cpu{Library::IMPL, "cs", DispatchKey::kCPU, "cs.cc", 2};
  Library meta{Library::IMPL, "cs", DispatchKey::kMeta, "cs.cc", 3};
  Ops() {
    lib.def("add(Tensor x, Tensor y) -> Tensor");
    lib.def("add.out(Tensor x, Tensor y, *, Tensor(a!) out) -> Tensor(a!)");
    lib.def("relu(Tensor x) -> Tensor");
    lib.def("relu.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
    lib.def("add_(Tensor(a!) x, Tensor y) -> Tensor(a!)");
    lib.def("twice(Tensor x) -> Tensor");  // its meta function calls cs::add
    cpu.impl("add.out", &AddOut).impl("relu.out", &ReluOut).impl("add_", &AddInplace);
    cpu.impl("twice", [](const Tensor& x) { return Add().call(x, x); });
    meta.impl("add", [](const Tensor& x, const Tensor& y) { return opreg::empty_like(x); });
    meta.impl("relu", [](const Tensor& x) { return opreg::empty_like(x); });
    meta.impl("add_", [](Tensor& x, const Tensor& y) -> Tensor& { return x; });
    meta.impl("twice", [](const Tensor& x) { return Add().call(x, x); });
  }
  static opreg::TypedOperatorHandle<Tensor(const Tensor&, const Tensor&)> Add() {
    return Dispatcher::Get().FindOpOrThrow("cs::add").typed<Tensor(const Tensor&, const Tensor&)>();
  }
  static opreg::TypedOperatorHandle<Tensor(const Tensor&)> Relu() {
    return Dispatcher::Get().FindOpOrThrow("cs::relu").typed<Tensor(const Tensor&)>();
  }
};

Tensor Input(std::vector<float> v) {
  Tensor t = opreg::empty({static_cast<int64_t>(v.size())}, DType::kFloat32);
  for (size_t i = 0; i < v.size(); ++i) F(t)[i] = v[i];
  return t;
}
std::vector<float> Values(const Tensor& t) { return std::vector<float>(F(t), F(t) + t.numel()); }

TEST_CASE("ordinary calls inside a CaptureScope are recorded, not run", "[capture]") {
  Ops ops;
  Tensor x = Input({-1, 2, -3, 4});
  Tensor w = Input({1, 1, 1, 1});
  const int before = g_cpu_calls;
  Graph g;
  std::vector<Tensor> inputs;
  {
    CaptureScope capture;
    Tensor a = Ops::Add().call(x, w);  // typed
    CHECK(a.is_meta());
    Tensor b = Ops::Relu().call(a);
    // Boxed, with a keyword argument.
    Stack out =
        Dispatcher::Get().FindOpOrThrow("cs::add").CallBoxed({IValue(b)}, {{"y", IValue(x)}});
    REQUIRE(out.size() == 1);
    Tensor c = out[0].toTensor();
    CHECK(c.is_meta());
    CHECK(c.sizes() == x.sizes());
    g = capture.Finish({c});
    inputs = capture.inputs();
  }
  CHECK(g_cpu_calls == before);  // nothing ran
  CHECK(g.nodes().size() == 3);
  REQUIRE(inputs.size() == 2);  // x and w, in first-use order
  CHECK(inputs[0].is_alias_of(x));
  CHECK(inputs[1].is_alias_of(w));
  // Replayed: relu(x + w) + x.
  PlannedExecutor ex(std::move(g));
  std::vector<Tensor> r = ex.Run(inputs);
  REQUIRE(r.size() == 1);
  CHECK(Values(r[0]) == std::vector<float>{-1, 5, -3, 9});
}

TEST_CASE("an in-place call inside a capture returns the caller's tensor, renamed", "[capture]") {
  Ops ops;
  Tensor x = Input({1, 2, 3});
  Tensor y = Input({10, 20, 30});
  auto add_ = Dispatcher::Get().FindOpOrThrow("cs::add_").typed<Tensor&(Tensor&, const Tensor&)>();
  CaptureScope capture;
  Tensor& r = add_.call(x, y);
  CHECK(&r == &x);  // the reference is the argument, as outside a capture
  CHECK(Values(x) == std::vector<float>{1, 2, 3});  // not run
  Tensor z = Ops::Add().call(x, y);                 // reads the renamed x
  std::optional<CaptureScope::Entry> renamed = capture.Lookup(x);
  REQUIRE(renamed.has_value());
  CHECK(renamed->value.id != capture.Lookup(y)->value.id);
  Graph g = capture.Finish({z});
  CHECK(g.nodes().size() == 2);
  PlannedExecutor ex(std::move(g));
  std::vector<Tensor> ins = capture.inputs();
  Tensor x2 = Input({1, 2, 3});
  ins[0] = x2;
  std::vector<Tensor> out = ex.Run(ins);
  CHECK(Values(out[0]) == std::vector<float>{21, 42, 63});  // (x + y) + y
  CHECK(Values(x2) == std::vector<float>{11, 22, 33});      // the mutation replays
}

TEST_CASE("capture on one thread never records another thread's calls", "[capture][threads]") {
  Ops ops;
  Tensor x = Input({1, 2, 3});
  std::mutex mu;
  std::condition_variable cv;
  bool capturing = false, other_done = false;
  Tensor other_result;
  std::thread other([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return capturing; });
    // The main thread is inside its scope now: this call runs for real.
    other_result = Ops::Add().call(x, x);
    Stack boxed = Dispatcher::Get().FindOpOrThrow("cs::relu").CallBoxed({IValue(other_result)});
    other_result = boxed[0].toTensor();
    other_done = true;
    cv.notify_all();
  });
  Graph g;
  {
    CaptureScope capture;
    Tensor a = Ops::Add().call(x, x);
    {
      std::unique_lock<std::mutex> lock(mu);
      capturing = true;
      cv.notify_all();
      cv.wait(lock, [&] { return other_done; });
    }
    Tensor b = Ops::Relu().call(a);
    g = capture.Finish({b});
  }
  other.join();
  CHECK(g.nodes().size() == 2);  // the main thread's two calls only
  REQUIRE(other_result.defined());
  CHECK_FALSE(other_result.is_meta());
  CHECK(Values(other_result) == std::vector<float>{2, 4, 6});
}

TEST_CASE("ops called by the kernels a capture runs are real calls", "[capture]") {
  Ops ops;
  Tensor x = Input({1, 2});
  CaptureScope capture;
  Tensor t = Dispatcher::Get().FindOpOrThrow("cs::twice").typed<Tensor(const Tensor&)>().call(x);
  CHECK(t.is_meta());
  Graph g = capture.Finish({t});
  REQUIRE(g.nodes().size() == 1);  // twice, not the add its meta function calls
  CHECK(g.nodes()[0].op.operator_name().str() == "cs::twice");
}

TEST_CASE("capture scopes do not nest, and calls run again after Finish", "[capture]") {
  Ops ops;
  Tensor x = Input({1, 2});
  {
    CaptureScope capture;
    REQUIRE_THROWS_AS(CaptureScope(), opreg::Error);
    try {
      CaptureScope nested;
    } catch (const opreg::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("already active on this thread"));
    }
    Tensor a = Ops::Add().call(x, x);
    CHECK(a.is_meta());
    Graph g = capture.Finish({a});
    // Finished: this thread calls for real again, and may capture anew.
    Tensor b = Ops::Add().call(x, x);
    CHECK(Values(b) == std::vector<float>{2, 4});
    CaptureScope again;
    CHECK(Ops::Add().call(x, x).is_meta());
    REQUIRE_THROWS_WITH(again.Finish({x, Input({1})}),
                        Catch::Contains("output #1 is not a tensor of this capture"));
  }
  CHECK_FALSE(opreg::detail::AnyCallInterceptor());
  CHECK(Values(Ops::Add().call(x, x)) == std::vector<float>{2, 4});
}

}  // namespace

// An op whose Meta kernel, for 8-element inputs, waits until the test releases it: planning a
// graph for that input signature then takes as long as the test wants.
struct GateOps {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool released = false;
  std::atomic<int> plans_of_16{0};
  Library lib{Library::FRAGMENT, "csgate", std::nullopt, "gate.cc", 1};
  Library cpu{Library::IMPL, "csgate", DispatchKey::kCPU, "gate.cc", 2};
  Library meta{Library::IMPL, "csgate", DispatchKey::kMeta, "gate.cc", 3};
  GateOps() {
    lib.def("gate(Tensor x) -> Tensor");
    lib.def("gate.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
    cpu.impl("gate.out", [](const Tensor& x, Tensor& out) -> Tensor& {
      for (int64_t i = 0; i < x.numel(); ++i) F(out)[i] = 2 * F(x)[i];
      return out;
    });
    meta.impl("gate", [this](const Tensor& x) {
      if (x.numel() == 16) ++plans_of_16;
      if (x.numel() == 8) {
        std::unique_lock<std::mutex> lock(mu);
        entered = true;
        cv.notify_all();
        cv.wait(lock, [this] { return released; });
      }
      return opreg::empty_like(x);
    });
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return entered; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
};

TEST_CASE("planning a new input signature never blocks replays that have a plan",
          "[capture][threads]") {
  GateOps ops;
  auto gate = Dispatcher::Get().FindOpOrThrow("csgate::gate").typed<Tensor(const Tensor&)>();
  Graph g;
  {
    CaptureScope capture;
    Tensor x = Input({1, 2, 3, 4});
    g = capture.Finish({gate.call(x)});
  }
  PlannedExecutor ex(std::move(g));
  CHECK(Values(ex.Run({Input({1, 2, 3, 4})})[0]) == std::vector<float>{2, 4, 6, 8});
  REQUIRE(ex.num_cached_plans() == 1);

  // Another thread plans 8-element inputs; its planning waits inside the Meta kernel.
  std::thread planner([&] {
    std::vector<Tensor> r = ex.Run({Input({1, 1, 1, 1, 1, 1, 1, 1})});
    CHECK(Values(r[0]) == std::vector<float>(8, 2.0f));
  });
  ops.WaitEntered();
  // Meanwhile the planned signature replays, more than once, without waiting.
  for (int i = 0; i < 3; ++i) {
    CHECK(Values(ex.Run({Input({0, 1, 0, 1})})[0]) == std::vector<float>{0, 2, 0, 2});
  }
  CHECK(ex.num_cached_plans() == 1);  // the 8-element plan is not made yet
  ops.Release();
  planner.join();
  CHECK(ex.num_cached_plans() == 2);

  // Concurrent first calls with one new signature share one planning.
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] { ex.Run({opreg::full({16}, 1.0, DType::kFloat32)}); });
  }
  for (std::thread& t : callers) t.join();
  CHECK(ops.plans_of_16 == 1);
  CHECK(ex.num_cached_plans() == 3);
}
