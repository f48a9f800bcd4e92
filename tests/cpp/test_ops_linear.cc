// linear (OpenBLAS sgemm; the decode path for few rows) and graph capture of a small block replayed through PlannedExecutor.
#include <cmath>

#include "opreg/core/error.h"
#include "opreg/planner/graph.h"
#include "opreg/planner/planned_executor.h"
#include "ops_test_util.h"

namespace {

using namespace opreg_test;  // NOLINT
namespace ops = opreg::ops;

const DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

std::vector<double> LinearRef(const Tensor& x, const Tensor& w, const Tensor* b) {
  const auto vx = Values(x), vw = Values(w);
  const std::vector<double> vb = b ? Values(*b) : std::vector<double>();
  const int64_t k = w.size(1), n = w.size(0), rows = x.numel() / k;
  std::vector<double> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = b ? vb[j] : 0.0;
      for (int64_t i = 0; i < k; ++i) acc += vx[r * k + i] * vw[j * k + i];
      out[r * n + j] = acc;
    }
  }
  return out;
}

TEST_CASE("linear matches the double reference", "[ops][linear]") {
  for (DType dt : kDTypes) {
    uint32_t seed = 1;
    for (auto [xs, n] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
             {{1}, 1}, {{3, 17}, 5}, {{1, 64}, 33}, {{2, 3, 31}, 7}, {{129, 65}, 67},
             // The decode path (few rows): several groups of 8 rows, column blocks of 64 with a
             // partial last one, k with and without a tail past multiples of 16.
             {{8, 48}, 64}, {{9, 40}, 70}, {{64, 33}, 130}, {{65, 32}, 3}}) {
      const int64_t k = xs.back();
      const Tensor x = Rand(xs, dt, seed++), w = Rand({n, k}, dt, seed++, -0.5, 0.5);
      const Tensor b = Rand({n}, dt, seed++);
      INFO(Name(dt) << " k " << k << " n " << n);
      // f32 accumulation over k terms: the tolerance grows like sqrt(k).
      const double tol = Tol(dt) + 1e-6 * k;
      CheckClose(Values(ops::linear(x, w)), LinearRef(x, w, nullptr), tol, 1.0);
      const Tensor y = ops::linear(x, w, b);
      CHECK(y.size(-1) == n);
      CHECK(y.dim() == static_cast<int64_t>(xs.size()));
      CheckClose(Values(y), LinearRef(x, w, &b), tol, 1.0);
      std::vector<int64_t> os = xs;
      os.back() = n;
      Tensor out = opreg::empty(os, dt);
      CHECK(&ops::linear_out(x, w, b, out) == &out);
      CheckClose(Values(out), LinearRef(x, w, &b), tol, 1.0);
    }
  }
  // A transposed (strided) weight is made contiguous first.
  const Tensor x = Rand({4, 6}, DType::kFloat32, 9);
  const Tensor wt = Rand({6, 3}, DType::kFloat32, 10).as_strided({3, 6}, {1, 3}, 0);
  CheckClose(Values(ops::linear(x, wt)), LinearRef(x, wt.contiguous(), nullptr), 1e-5);
}

TEST_CASE("linear refuses bad arguments", "[ops][errors]") {
  const Tensor x = Rand({4, 6}, DType::kFloat16, 1);
  CHECK_THROWS_WITH(ops::linear(x, Rand({3, 5}, DType::kFloat16, 2)),
                    "[opreg::linear] argument 'weight' (#1): expected shape [N, 6], got [3, 5]");
  CHECK_THROWS_WITH(ops::linear(x, Rand({3, 6}, DType::kFloat32, 2)),
                    "[opreg::linear] argument 'weight' (#1): expected dtype f16, got f32");
  CHECK_THROWS_WITH(ops::linear(x, Rand({3, 6}, DType::kFloat16, 2), Rand({4}, DType::kFloat16, 3)),
                    "[opreg::linear] argument 'bias' (#2): expected shape [3], got [4]");
  Tensor out = opreg::empty({4, 3}, DType::kFloat16);
  const Tensor w = Rand({3, 6}, DType::kFloat16, 2);
  Tensor wm = w;  // an out overlapping the weight
  Tensor view = wm.narrow(1, 0, 3).as_strided({4, 3}, {3, 1}, 0);
  // Refused by the dispatcher's written-argument check (typed and boxed calls alike) before the
  // kernel's own aliasing check sees it.
  CHECK_THROWS_WITH(ops::linear_out(x, w, std::nullopt, view),
                    Catch::StartsWith("[opreg::linear.out] argument 'out' (#3) partially overlaps "
                                      "argument 'weight' (#1)"));
  ops::linear_out(x, w, std::nullopt, out);
}

TEST_CASE("a captured rms_norm -> linear -> silu_and_mul -> linear block replays like eager",
          "[ops][graph]") {
  for (DType dt : kDTypes) {
    const int64_t hidden = 24, inter = 40;
    const Tensor x = Rand({5, hidden}, dt, 1);
    const Tensor norm_w = Rand({hidden}, dt, 2, 0.5, 1.5);
    const Tensor w_up = Rand({2 * inter, hidden}, dt, 3, -0.3, 0.3);
    const Tensor w_down = Rand({hidden, inter}, dt, 4, -0.3, 0.3);
    const Tensor b_down = Rand({hidden}, dt, 5);

    const Tensor eager = ops::linear(
        ops::silu_and_mul(ops::linear(ops::rms_norm(x, norm_w, 1e-5), w_up)), w_down, b_down);

    opreg::GraphRecorder rec;
    const opreg::Value vx = rec.AddInput(x), vn = rec.AddInput(norm_w), vu = rec.AddInput(w_up),
                       vd = rec.AddInput(w_down), vb = rec.AddInput(b_down);
    const opreg::Value h = rec.Call("opreg::rms_norm", {vx, vn, 1e-5})[0];
    const opreg::Value up = rec.Call("opreg::linear", {h, vu})[0];
    const opreg::Value act = rec.Call("opreg::silu_and_mul", {up})[0];
    const opreg::Value y = rec.Call("opreg::linear", {act, vd, vb})[0];
    rec.MarkOutput(y);
    opreg::PlannedExecutor exec(rec.Finish());
    INFO(exec.graph().str());
    const std::vector<Tensor> inputs{x, norm_w, w_up, w_down, b_down};
    std::vector<Tensor> out = exec.Run(inputs);
    REQUIRE(out.size() == 1);
    CHECK(out[0].sizes() == eager.sizes());
    CHECK(Values(out[0]) == Values(eager));  // same kernels, same order: bit-identical
    const auto& plan = exec.PlanFor(inputs);
    CHECK(plan.execution ==
          std::vector<opreg::NodeExecution>(4, opreg::NodeExecution::kOutVariant));
    // Replays on other row counts replan and still match eager.
    const Tensor x2 = Rand({3, hidden}, dt, 7);
    const Tensor eager2 = ops::linear(
        ops::silu_and_mul(ops::linear(ops::rms_norm(x2, norm_w, 1e-5), w_up)), w_down, b_down);
    CHECK(Values(exec.Run({x2, norm_w, w_up, w_down, b_down})[0]) == Values(eager2));
    CHECK(Values(x) == Values(Rand({5, hidden}, dt, 1)));  // inputs untouched
    // The verifier (guard bytes after every slot, lifetimes, aliasing) finds nothing wrong: the
    // real kernels stay inside their slots.
    opreg::PlannedExecutor verified(exec.graph(), {64, opreg::VerifyMode::kAssert});
    CHECK(Values(verified.Run(inputs)[0]) == Values(eager));
    CHECK(verified.TakeVerifierFindings().empty());
  }
}

}  // namespace
