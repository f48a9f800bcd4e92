// rms_norm (functional, .out) and fused_add_rms_norm_ (in place on two arguments).
#include <cmath>

#include "opreg/core/error.h"
#include "ops_test_util.h"

namespace {

using namespace opreg_test;  // NOLINT
namespace ops = opreg::ops;

const DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
const std::vector<std::vector<int64_t>> kShapes = {{1},     {7},         {1, 33},
                                                   {5, 17}, {2, 3, 129}, {300, 257}};

// rms_norm over the last dim, in double.
std::vector<double> RmsNormRef(const std::vector<double>& x, const std::vector<double>& w,
                               double eps) {
  const size_t h = w.size();
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / h; ++r) {
    double ss = 0;
    for (size_t j = 0; j < h; ++j) ss += x[r * h + j] * x[r * h + j];
    const double inv = 1.0 / std::sqrt(ss / h + eps);
    for (size_t j = 0; j < h; ++j) out[r * h + j] = x[r * h + j] * inv * w[j];
  }
  return out;
}

TEST_CASE("rms_norm matches the double reference", "[ops][rms_norm]") {
  for (DType dt : kDTypes) {
    uint32_t seed = 10;
    for (const auto& shape : kShapes) {
      INFO(Name(dt) << " shape size " << shape.size() << " last " << shape.back());
      const Tensor x = Rand(shape, dt, seed++), w = Rand({shape.back()}, dt, seed++, 0.5, 1.5);
      const auto vx = Values(x), vw = Values(w);
      const auto ref = RmsNormRef(vx, vw, 1e-6);
      Tensor y = ops::rms_norm(x, w);
      CHECK(y.sizes() == x.sizes());
      CheckClose(Values(y), ref, Tol(dt));
      Tensor out = opreg::empty(shape, dt);
      CHECK(&ops::rms_norm_out(x, w, 0.5, out) == &out);
      CheckClose(Values(out), RmsNormRef(vx, vw, 0.5), Tol(dt));
      CHECK(Values(x) == vx);
      CHECK(Values(w) == vw);
    }
  }
}

TEST_CASE("rms_norm makes strided inputs contiguous", "[ops][rms_norm]") {
  const Tensor base = Rand({6, 20}, DType::kFloat32, 3);
  const Tensor x = base.narrow(1, 2, 9);  // rows with a gap
  const Tensor w = Rand({9}, DType::kFloat32, 4);
  CheckClose(Values(ops::rms_norm(x, w)), RmsNormRef(Values(x), Values(w), 1e-6), 1e-5);
}

TEST_CASE("fused_add_rms_norm_ mutates input and residual, not weight", "[ops][rms_norm]") {
  for (DType dt : kDTypes) {
    uint32_t seed = 50;
    for (const auto& shape : kShapes) {
      INFO(Name(dt) << " last " << shape.back());
      Tensor x = Rand(shape, dt, seed++), res = Rand(shape, dt, seed++);
      const Tensor w = Rand({shape.back()}, dt, seed++, 0.5, 1.5);
      const auto vx = Values(x), vr = Values(res), vw = Values(w);
      // residual' = round(x + residual); input' = rms_norm(residual') * w.
      std::vector<double> sum(vx.size());
      for (size_t i = 0; i < vx.size(); ++i) sum[i] = vx[i] + vr[i];
      const auto rounded = Values(FromValues(sum, shape, dt));
      ops::fused_add_rms_norm_(x, res, w);
      CheckClose(Values(res), sum, Tol(dt));
      CheckClose(Values(x), RmsNormRef(rounded, vw, 1e-6), Tol(dt));
      CHECK(Values(w) == vw);
    }
  }
}

TEST_CASE("norm ops refuse bad arguments with precise messages", "[ops][errors]") {
  const Tensor x = Rand({4, 8}, DType::kBFloat16, 1);
  const Tensor w32 = Rand({8}, DType::kFloat32, 2);
  CHECK_THROWS_WITH(ops::rms_norm(x, w32),
                    "[opreg::rms_norm] argument 'weight' (#1): expected dtype bf16, got f32");
  CHECK_THROWS_WITH(ops::rms_norm(x, Rand({7}, DType::kBFloat16, 3)),
                    "[opreg::rms_norm] argument 'weight' (#1): expected shape [8], got [7]");
  CHECK_THROWS_WITH(ops::rms_norm(opreg::zeros({4, 8}, DType::kFloat64), w32),
                    "[opreg::rms_norm] argument 'input' (#0): expected dtype f32, f16 or bf16, "
                    "got f64");
  CHECK_THROWS_WITH(ops::rms_norm(x, Rand({8}, DType::kBFloat16, 3), -1.0),
                    "[opreg::rms_norm] argument 'eps' (#2): expected a finite value >= 0, got -1");
  CHECK_THROWS_WITH(ops::rms_norm(x, opreg::empty({8}, DType::kBFloat16, Device::meta())),
                    "[opreg::rms_norm] expected all tensor arguments on one device, but argument "
                    "'input' (#0) is on cpu and argument 'weight' (#1) on meta");
  const Tensor w = Rand({8}, DType::kBFloat16, 4);
  Tensor out = opreg::empty({4, 8}, DType::kFloat16);
  CHECK_THROWS_WITH(ops::rms_norm_out(x, w, 1e-6, out),
                    "[opreg::rms_norm.out] argument 'out' (#3): expected dtype bf16, got f16");
  Tensor xin = Rand({4, 8}, DType::kBFloat16, 5);
  CHECK_THROWS_WITH(ops::rms_norm_out(xin, w, 1e-6, xin),
                    Catch::StartsWith("[opreg::rms_norm.out] argument 'out' (#3): expected a "
                                      "tensor that does not overlap argument 'input' (#0)"));

  // fused_add_rms_norm_: aliasing, shapes, layouts; nothing written on error.
  Tensor a = Rand({4, 8}, DType::kFloat32, 6), r = Rand({4, 8}, DType::kFloat32, 7);
  const Tensor wf = Rand({8}, DType::kFloat32, 8);
  const auto va = Values(a);
  CHECK_THROWS_WITH(ops::fused_add_rms_norm_(a, a, wf),
                    "[opreg::fused_add_rms_norm_] argument 'residual' (#1): expected a tensor "
                    "that does not overlap argument 'input' (#0), got one that shares its memory");
  Tensor r_small = Rand({4, 7}, DType::kFloat32, 9);
  CHECK_THROWS_WITH(ops::fused_add_rms_norm_(a, r_small, wf),
                    "[opreg::fused_add_rms_norm_] argument 'residual' (#1): expected shape "
                    "[4, 8] (that of argument 'input' (#0)), got [4, 7]");
  Tensor r16 = Rand({4, 8}, DType::kFloat16, 9);
  CHECK_THROWS_WITH(ops::fused_add_rms_norm_(a, r16, wf),
                    "[opreg::fused_add_rms_norm_] argument 'residual' (#1): expected dtype f32, "
                    "got f16");
  CHECK(Values(a) == va);
  // A strided input (a transposed view) is updated in place like a contiguous one (CPU: through
  // contiguous temporaries copied back); an expanded one is refused.
  Tensor strided = Rand({8, 4}, DType::kFloat32, 10).as_strided({4, 8}, {1, 4}, 0);
  Tensor dense = strided.contiguous(), r1 = r.clone(), r2 = r.clone();
  ops::fused_add_rms_norm_(strided, r1, wf);
  ops::fused_add_rms_norm_(dense, r2, wf);
  CHECK(Values(strided) == Values(dense));
  CHECK(Values(r1) == Values(r2));
  Tensor expanded = Rand({1, 8}, DType::kFloat32, 11).as_strided({4, 8}, {0, 1}, 0);
  CHECK_THROWS_WITH(ops::fused_add_rms_norm_(expanded, r, wf),
                    "[opreg::fused_add_rms_norm_] argument 'input' (#0): expected a tensor whose "
                    "elements do not overlap, got stride 0 in dim 0 (an expanded tensor)");
}

TEST_CASE("typed calls refuse written arguments that partially overlap an input",
          "[ops][errors]") {
  // One buffer of 40 floats: input = elements 0..15, residual = 4..19 (12 shared, shifted).
  Tensor buf = Rand({40}, DType::kFloat32, 7);
  Tensor input = buf.narrow(0, 0, 16).view({2, 8});
  Tensor residual = buf.narrow(0, 4, 16).view({2, 8});
  const Tensor w = Rand({8}, DType::kFloat32, 8, 0.5, 1.5);
  const auto before = Values(buf);
  try {
    ops::fused_add_rms_norm_(input, residual, w);
    FAIL("a partially overlapping residual was accepted");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kValue);
    CHECK_THAT(e.what(), Catch::Contains("[opreg::fused_add_rms_norm_] argument 'input' (#0) "
                                         "partially overlaps argument 'residual' (#1)"));
  }
  CHECK(Values(buf) == before);  // refused before the kernel ran
  Tensor out = buf.narrow(0, 8, 16).view({2, 8});
  CHECK_THROWS_WITH(ops::rms_norm_out(input, w, 1e-6, out),
                    Catch::Contains("argument 'out' (#3) partially overlaps argument 'input'"));
  // Disjoint views of one buffer are fine.
  Tensor separate = buf.narrow(0, 16, 16).view({2, 8});
  ops::rms_norm_out(input, w, 1e-6, separate);
  CheckClose(Values(separate), RmsNormRef(Values(input), Values(w), 1e-6), 1e-5);
}

TEST_CASE("norm meta functions", "[ops][meta]") {
  Tensor x = opreg::empty({3, 16}, DType::kFloat16, Device::meta());
  Tensor r = opreg::empty({3, 16}, DType::kFloat16, Device::meta());
  const Tensor w = opreg::empty({16}, DType::kFloat16, Device::meta());
  CHECK(ops::rms_norm(x, w).is_meta());
  ops::fused_add_rms_norm_(x, r, w);  // validates only
  CHECK_THROWS_WITH(
      ops::fused_add_rms_norm_(x, r, opreg::empty({15}, DType::kFloat16, Device::meta())),
      "[opreg::fused_add_rms_norm_] argument 'weight' (#2): expected shape [16], "
      "got [15]");
}

}  // namespace
