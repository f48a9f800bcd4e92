// Built-in ops (opreg::ops) captured by a CaptureScope as in the README, replayed to the eager
// results. Apart from test_capture_scope, which also runs under TSan (OpenBLAS and OpenMP do not).
#include <catch2/catch.hpp>

#include "opreg/core/tensor_factories.h"
#include "opreg/ops/ops.h"
#include "opreg/planner/capture_scope.h"
#include "opreg/planner/planned_executor.h"

namespace {

using opreg::CaptureScope;
using opreg::DType;
using opreg::Graph;
using opreg::PlannedExecutor;
using opreg::Tensor;

float* F(const Tensor& t) { return t.data_ptr<float>(); }
std::vector<float> Values(const Tensor& t) { return std::vector<float>(F(t), F(t) + t.numel()); }

TEST_CASE("built-in ops captured as in the README replay to the eager results", "[capture]") {
  Tensor x = opreg::empty({4, 16}, DType::kFloat32);
  Tensor w = opreg::empty({16}, DType::kFloat32);
  for (int64_t i = 0; i < x.numel(); ++i) F(x)[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (int64_t i = 0; i < w.numel(); ++i) F(w)[i] = 0.5f + 0.1f * static_cast<float>(i);
  Tensor eager = opreg::ops::silu_and_mul(opreg::ops::rms_norm(x, w, 1e-6));
  Graph graph;
  std::vector<Tensor> inputs;
  {
    CaptureScope capture;
    Tensor h = opreg::ops::rms_norm(x, w, 1e-6);
    Tensor y = opreg::ops::silu_and_mul(h);
    CHECK(y.is_meta());
    CHECK(y.sizes() == eager.sizes());
    graph = capture.Finish({y});
    inputs = capture.inputs();
  }
  CHECK(graph.nodes().size() == 2);
  PlannedExecutor planned(std::move(graph));
  std::vector<Tensor> out = planned.Run(inputs);
  REQUIRE(out.size() == 1);
  CHECK(Values(out[0]) == Values(eager));
}

}  // namespace
