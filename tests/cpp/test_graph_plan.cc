// Graph capture, liveness, planning and planned replay: results, allocator calls, aliasing and
// mutation cases, data-dependent outputs, the plan cache and the verifier.
#include <catch2/catch.hpp>

#include "opreg/core/allocator.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"
#include "opreg/planner/planned_executor.h"

namespace {

using opreg::DispatchKey;
using opreg::DType;
using opreg::Graph;
using opreg::GraphRecorder;
using opreg::Library;
using opreg::MemoryPlan;
using opreg::NodeExecution;
using opreg::PlannedExecutor;
using opreg::PlanOptions;
using opreg::StorageKind;
using opreg::Tensor;
using opreg::Value;
using opreg::VerifyMode;

float* F(const Tensor& t) { return t.data_ptr<float>(); }

// ---- Test ops (namespace gp) ----
Tensor& AddOut(const Tensor& x, const Tensor& y, Tensor& out) {
  for (int64_t i = 0; i < x.numel(); ++i) F(out)[i] = F(x)[i] + F(y)[i];
  return out;
}
Tensor& ReluOut(const Tensor& x, Tensor& out) {
  for (int64_t i = 0; i < x.numel(); ++i) F(out)[i] = F(x)[i] > 0 ? F(x)[i] : 0;
  return out;
}
std::tuple<Tensor&, Tensor&> SplitAddOut(const Tensor& x, const Tensor& y, Tensor& s, Tensor& d) {
  for (int64_t i = 0; i < x.numel(); ++i) {
    F(s)[i] = F(x)[i] + F(y)[i];
    F(d)[i] = F(x)[i] - F(y)[i];
  }
  return {s, d};
}
Tensor SameShape(const Tensor& x) { return opreg::empty_like(x); }
Tensor SameShape2(const Tensor& x, const Tensor& y) { return opreg::empty_like(x); }
std::tuple<Tensor, Tensor> TwoSameShape(const Tensor& x, const Tensor& y) {
  return {opreg::empty_like(x), opreg::empty_like(x)};
}
// Writes one element past its output: the verifier's guard bytes must notice.
Tensor& OverrunOut(const Tensor& x, Tensor& out) {
  for (int64_t i = 0; i <= x.numel(); ++i) F(out)[i] = 1.0f;
  return out;
}
Tensor g_kept;  // a kernel that keeps its output alive (the verifier must notice)
Tensor& KeepOut(const Tensor& x, Tensor& out) {
  ReluOut(x, out);
  g_kept = out;
  return out;
}

struct Ops {
  Library lib{Library::FRAGMENT, "gp", std::nullopt, "gp.cc", 1};
  Library cpu{Library::IMPL, "gp", DispatchKey::kCPU, "gp.cc", 2};
  Library meta{Library::IMPL, "gp", DispatchKey::kMeta, "gp.cc", 3};
  Ops() {
    lib.def("add(Tensor x, Tensor y) -> Tensor");
    lib.def("add.out(Tensor x, Tensor y, *, Tensor(a!) out) -> Tensor(a!)");
    lib.def("relu(Tensor x) -> Tensor");
    lib.def("relu.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
    lib.def("split_add(Tensor x, Tensor y) -> (Tensor, Tensor)");
    lib.def(
        "split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0, Tensor(b!) out1) -> "
        "(Tensor(a!), Tensor(b!))");
    lib.def("flat(Tensor(a) x) -> Tensor(a)");                          // a view
    lib.def("add_(Tensor(a!) x, Tensor y) -> ()");                      // in place
    lib.def("mut_split(Tensor(a!) x) -> (Tensor, Tensor)");             // mutates, fresh outputs
    lib.def("positive(Tensor x) -> Tensor", {"dynamic_output_shape"});  // data-dependent size
    lib.def("overrun(Tensor x) -> Tensor");
    lib.def("overrun.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
    lib.def("keep(Tensor x) -> Tensor");
    lib.def("keep.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
    lib.def("same(Tensor x) -> Tensor");  // returns its input
    cpu.impl("add.out", &AddOut).impl("relu.out", &ReluOut).impl("split_add.out", &SplitAddOut);
    cpu.impl("overrun.out", &OverrunOut).impl("keep.out", &KeepOut);
    cpu.impl("flat", [](const Tensor& x) { return x.view({x.numel()}); });
    cpu.impl("add_", [](Tensor& x, const Tensor& y) {
      for (int64_t i = 0; i < x.numel(); ++i) F(x)[i] += F(y)[i];
    });
    cpu.impl("mut_split", [](Tensor& x) {
      Tensor p = opreg::empty_like(x), q = opreg::empty_like(x);
      for (int64_t i = 0; i < x.numel(); ++i) {
        F(x)[i] *= 2;
        F(p)[i] = F(x)[i] + 1;
        F(q)[i] = F(x)[i] - 1;
      }
      return std::make_tuple(p, q);
    });
    cpu.impl("positive", [](const Tensor& x) {
      std::vector<float> kept;
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (F(x)[i] > 0) kept.push_back(F(x)[i]);
      }
      Tensor out = opreg::empty({static_cast<int64_t>(kept.size())}, DType::kFloat32);
      for (size_t i = 0; i < kept.size(); ++i) F(out)[i] = kept[i];
      return out;
    });
    cpu.impl("same", [](const Tensor& x) { return x; });
    meta.impl("add", &SameShape2).impl("relu", &SameShape).impl("split_add", &TwoSameShape);
    meta.impl("overrun", &SameShape).impl("keep", &SameShape).impl("same", &SameShape);
    meta.impl("flat", [](const Tensor& x) { return x.view({x.numel()}); });
    meta.impl("add_", [](Tensor& x, const Tensor& y) {});
    meta.impl("mut_split", [](Tensor& x) {
      return std::make_tuple(opreg::empty_like(x), opreg::empty_like(x));
    });
    // The upper bound: every element positive.
    meta.impl("positive",
              [](const Tensor& x) { return opreg::empty({x.numel()}, x.dtype(), x.device()); });
  }
};

Tensor Input(std::vector<float> v) {
  Tensor t = opreg::empty({static_cast<int64_t>(v.size())}, DType::kFloat32);
  for (size_t i = 0; i < v.size(); ++i) F(t)[i] = v[i];
  return t;
}
std::vector<float> Values(const Tensor& t) { return std::vector<float>(F(t), F(t) + t.numel()); }

// relu(x + x) + x, as a graph.
Graph Chain(const Tensor& example) {
  GraphRecorder rec;
  Value x = rec.AddInput(example);
  Value a = rec.Call("gp::add", {x, x})[0];
  Value b = rec.Call("gp::relu", {a})[0];
  Value c = rec.Call("gp::add", {b, x})[0];
  rec.MarkOutput(c);
  return rec.Finish();
}

TEST_CASE("a recorded chain replays through out kernels on arena slots", "[graph]") {
  Ops ops;
  Tensor x = Input({-1, 2, -3, 4});
  PlannedExecutor exec(Chain(x));
  CHECK(exec.graph().str() ==
        "%0 = input : f32[4] cpu\n%1 = gp::add(%0, %0) : f32[4] cpu\n%2 = gp::relu(%1) : f32[4] "
        "cpu\n%3 = gp::add(%2, %0) : f32[4] cpu\nreturn %3\n");
  std::vector<Tensor> out = exec.Run({x});
  CHECK(Values(out[0]) == std::vector<float>{-1, 6, -3, 12});

  const MemoryPlan& plan = exec.PlanFor({x});
  CHECK(plan.execution == std::vector<NodeExecution>(3, NodeExecution::kOutVariant));
  CHECK(plan.use_arena);
  CHECK(plan.arena_bytes == plan.lb_bytes);
  CHECK(plan.arena_bytes == 128);  // %1 and %2 overlap at step 1: two 64-byte slots
  CHECK(plan.arena_bytes <= plan.eager_peak_bytes);

  // A replay allocates its output, and nothing else.
  auto before = opreg::GetCpuAllocatorStats();
  out = exec.Run({x});
  CHECK(opreg::GetCpuAllocatorStats().allocations - before.allocations == 1);
  // With the output buffer given, a replay makes no allocator call at all.
  Tensor y = opreg::empty({4}, DType::kFloat32);
  before = opreg::GetCpuAllocatorStats();
  exec.Run({Input({1, 1, 1, 1})}, {y});
  CHECK(opreg::GetCpuAllocatorStats().allocations - before.allocations == 1);  // the input only
  Tensor in = Input({1, 1, 1, 1});
  before = opreg::GetCpuAllocatorStats();
  exec.Run({in}, {y});
  CHECK(opreg::GetCpuAllocatorStats().allocations - before.allocations == 0);
  CHECK(Values(y) == std::vector<float>{3, 3, 3, 3});
}

TEST_CASE("plans are cached per input signature", "[graph]") {
  Ops ops;
  PlannedExecutor exec(Chain(Input({1, 2})));
  exec.Run({Input({1, 2})});
  exec.Run({Input({3, 4})});
  CHECK(exec.num_cached_plans() == 1);
  std::vector<Tensor> out = exec.Run({Input({1, -2, 3})});  // another shape: replanned
  CHECK(exec.num_cached_plans() == 2);
  CHECK(Values(out[0]) == std::vector<float>{3, -2, 9});
  exec.Run({Input({5, 6})});
  CHECK(exec.num_cached_plans() == 2);
  CHECK_THROWS_WITH(exec.Run({opreg::zeros({2}, DType::kFloat64)}),
                    Catch::StartsWith("graph input #0: expected f32[2] cpu"));
}

TEST_CASE("with a budget, the exact plan is made once per input signature", "[graph]") {
  Ops ops;
  PlanOptions options;
  options.budget_ms = 1000;
  PlannedExecutor exec(Chain(Input({1, 2})), options);
  const MemoryPlan* first = &exec.PlanFor({Input({1, 2})});
  CHECK(first->search == "optimal");  // the chain's heuristic arena is at the lower bound
  CHECK(first->optimal_by == "lower bound");
  CHECK_THAT(first->Summary(), Catch::Contains("optimal by lower bound"));
  const double plan_ms = first->plan_ms;
  std::vector<Tensor> out = exec.Run({Input({-1, 3})});
  CHECK(Values(out[0]) == std::vector<float>{-1, 9});
  // The same signature: the cached plan, not planned again.
  CHECK(&exec.PlanFor({Input({7, 8})}) == first);
  CHECK(first->plan_ms == plan_ms);
  CHECK(exec.num_cached_plans() == 1);
}

TEST_CASE("multi-output ops get one slot per output; a dead output dies at once", "[graph]") {
  Ops ops;
  Tensor x = Input({1, 2, 3});
  GraphRecorder rec;
  Value in = rec.AddInput(x);
  auto sd = rec.Call("gp::split_add", {in, in});  // d = x - x is never used
  Value r = rec.Call("gp::relu", {sd[0]})[0];
  rec.MarkOutput(r);
  PlannedExecutor exec(rec.Finish());
  CHECK(Values(exec.Run({x})[0]) == std::vector<float>{2, 4, 6});
  const MemoryPlan& plan = exec.PlanFor({x});
  const auto& s = plan.groups[plan.group_of_value[sd[0].id]];
  const auto& d = plan.groups[plan.group_of_value[sd[1].id]];
  CHECK(s.kind == StorageKind::kArena);
  CHECK(d.kind == StorageKind::kArena);
  CHECK(d.first == 0);
  CHECK(d.last == 0);  // freed at its own step
  CHECK(s.last == 1);
  CHECK(plan.groups[plan.group_of_value[sd[0].id]].root.id !=
        plan.groups[plan.group_of_value[sd[1].id]].root.id);
}

TEST_CASE("a mutation is a rename: it extends the storage's life", "[graph]") {
  Ops ops;
  Tensor x = Input({1, -2, 3}), y = Input({-5, -5, -5});
  GraphRecorder rec;
  Value vx = rec.AddInput(x), vy = rec.AddInput(y);
  Value a = rec.Call("gp::add", {vx, vx})[0];    // step 0
  CHECK(rec.Call("gp::add_", {a, vy}).empty());  // step 1: a += y (no new value)
  Value b = rec.Call("gp::relu", {a})[0];        // step 2
  rec.MarkOutput(b);
  PlannedExecutor exec(rec.Finish());
  CHECK(Values(exec.Run({x, y})[0]) == std::vector<float>{0, 0, 1});
  const MemoryPlan& plan = exec.PlanFor({x, y});
  CHECK(plan.values.size() == 4);  // two inputs, a, b: the mutation made no value
  const auto& ga = plan.groups[plan.group_of_value[a.id]];
  CHECK(ga.kind == StorageKind::kArena);
  CHECK(ga.last == 2);
  CHECK(plan.execution[1] == NodeExecution::kDirect);
}

TEST_CASE("views join their source's storage", "[graph]") {
  Ops ops;
  Tensor x = opreg::zeros({2, 2}, DType::kFloat32);
  GraphRecorder rec;
  Value vx = rec.AddInput(x);
  Value a = rec.Call("gp::add", {vx, vx})[0];  // step 0
  Value v = rec.Call("gp::flat", {a})[0];      // step 1: a view of a
  Value b = rec.Call("gp::relu", {v})[0];      // step 2
  rec.MarkOutput(b);
  PlannedExecutor exec(rec.Finish());
  exec.Run({x});
  const MemoryPlan& plan = exec.PlanFor({x});
  CHECK(plan.group_of_value[v.id] == plan.group_of_value[a.id]);
  CHECK(plan.groups[plan.group_of_value[a.id]].last == 2);
}

TEST_CASE("a mutating op's outputs get fresh storage and a dead one is freed early", "[graph]") {
  Ops ops;
  Tensor x = Input({1, 2});
  GraphRecorder rec;
  Value vx = rec.AddInput(x);
  Value a = rec.Call("gp::add", {vx, vx})[0];    // step 0: a = 2x
  auto pq = rec.Call("gp::mut_split", {a});      // step 1: a *= 2; p = a+1; q = a-1
  Value r = rec.Call("gp::add", {pq[0], a})[0];  // step 2: r = p + a
  rec.MarkOutput(r);
  PlannedExecutor exec(rec.Finish(), PlanOptions{64, VerifyMode::kAssert});
  CHECK(Values(exec.Run({x})[0]) == std::vector<float>{9, 17});
  const MemoryPlan& plan = exec.PlanFor({x});
  const int32_t ga = plan.group_of_value[a.id];
  CHECK(plan.group_of_value[pq[0].id] != ga);
  CHECK(plan.group_of_value[pq[1].id] != ga);
  CHECK(plan.groups[plan.group_of_value[pq[1].id]].kind == StorageKind::kRuntime);
  CHECK(plan.groups[plan.group_of_value[pq[1].id]].last == 1);  // q is dead at its own step
  CHECK(plan.groups[ga].last == 2);
  CHECK(exec.TakeVerifierFindings().empty());
}

TEST_CASE("data-dependent outputs are allocated when they are made", "[graph]") {
  Ops ops;
  Tensor x = Input({-1, 2, -3, 4, 5});
  GraphRecorder rec;
  Value vx = rec.AddInput(x);
  Value p = rec.Call("gp::positive", {vx})[0];
  Value r = rec.Call("gp::relu", {p})[0];  // sized by p at run time, not by the estimate
  Value s = rec.Call("gp::relu", {vx})[0];
  rec.MarkOutput(r);
  rec.MarkOutput(s);
  PlannedExecutor exec(rec.Finish());
  std::vector<Tensor> out = exec.Run({x});
  CHECK(Values(out[0]) == std::vector<float>{2, 4, 5});
  CHECK(Values(out[1]) == std::vector<float>{0, 2, 0, 4, 5});
  const MemoryPlan& plan = exec.PlanFor({x});
  CHECK(plan.groups[plan.group_of_value[p.id]].kind == StorageKind::kRuntime);
  CHECK(plan.groups[plan.group_of_value[p.id]].bytes == 20);  // the estimate: all 5 elements
  CHECK(plan.execution[0] == NodeExecution::kDirect);
  CHECK(plan.execution[1] == NodeExecution::kDirect);  // its input's size is data-dependent
  CHECK(plan.execution[2] == NodeExecution::kOutVariant);
}

TEST_CASE("the verifier catches a kernel writing outside its slot", "[graph][verify]") {
  Ops ops;
  Tensor x = Input({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});  // 64 bytes
  GraphRecorder rec;
  Value vx = rec.AddInput(x);
  Value a = rec.Call("gp::overrun", {vx})[0];
  Value b = rec.Call("gp::relu", {a})[0];
  rec.MarkOutput(b);
  Graph g = rec.Finish();
  PlannedExecutor logging(g, PlanOptions{64, VerifyMode::kLog});
  logging.Run({x});
  std::vector<std::string> findings = logging.TakeVerifierFindings();
  REQUIRE(findings.size() == 1);
  CHECK(findings[0] ==
        "[gp::overrun] wrote outside the slot of %1 (output #0 of gp::overrun at step 0): guard "
        "byte 0 after its 64 bytes changed");
  PlannedExecutor asserting(g, PlanOptions{64, VerifyMode::kAssert});
  CHECK_THROWS_WITH(asserting.Run({x}), Catch::StartsWith("verifier: [gp::overrun] wrote "
                                                          "outside the slot of %1"));
  // Off: no guard bytes are planned (the overrunning kernel is not run there: it would write
  // past the arena, which only the guard bytes make safe to observe).
  PlannedExecutor off(g);
  CHECK(off.PlanFor({x}).guard_bytes == 0);
  CHECK(asserting.PlanFor({x}).guard_bytes == 64);
}

TEST_CASE("the verifier catches an intermediate kept alive and an undeclared alias",
          "[graph][verify]") {
  Ops ops;
  Tensor x = Input({1, -2});
  {
    GraphRecorder rec;
    Value vx = rec.AddInput(x);
    Value a = rec.Call("gp::keep", {vx})[0];
    Value b = rec.Call("gp::relu", {a})[0];
    rec.MarkOutput(b);
    PlannedExecutor exec(rec.Finish(), PlanOptions{64, VerifyMode::kLog});
    exec.Run({x});
    std::vector<std::string> findings = exec.TakeVerifierFindings();
    REQUIRE(findings.size() == 1);
    CHECK(findings[0] ==
          "%1 (output #0 of gp::keep at step 0) is still referenced after its "
          "last use at step 1: a kernel or caller kept an intermediate alive");
    g_kept = Tensor();
  }
  {
    GraphRecorder rec;
    Value vx = rec.AddInput(x);
    Value a = rec.Call("gp::add", {vx, vx})[0];
    Value s = rec.Call("gp::same", {a})[0];  // no out variant: runs directly, returns its input
    Value b = rec.Call("gp::relu", {s})[0];
    rec.MarkOutput(b);
    PlannedExecutor exec(rec.Finish(), PlanOptions{64, VerifyMode::kLog});
    exec.Run({x});
    std::vector<std::string> findings = exec.TakeVerifierFindings();
    REQUIRE_FALSE(findings.empty());
    CHECK(findings[0] ==
          "[gp::same] output #0 shares storage with an input, but the schema does "
          "not declare the alias (annotate it, e.g. Tensor(a) -> Tensor(a))");
  }
}

TEST_CASE("recording errors name the op and argument", "[graph]") {
  Ops ops;
  GraphRecorder rec;
  Value vx = rec.AddInput(Input({1}));
  CHECK_THROWS_WITH(rec.Call("gp::relu", {2.0}),
                    "[gp::relu] argument 'x' (#0): expected Tensor, got float");
  CHECK_THROWS_WITH(rec.Call("gp::relu", {Value{42}}), "%42 is not a value of this graph");
  CHECK_THROWS_WITH(rec.Call("gp::relu", {vx, vx}),
                    "[gp::relu] takes 1 positional arguments but 2 were given");
  CHECK_THROWS_WITH(rec.Call("gp::relu", {Input({1})}),
                    "[gp::relu] argument 'x' (#0): expected a graph value (pass tensors through "
                    "AddInput), got a Tensor constant");
}

}  // namespace
