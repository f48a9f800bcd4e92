// silu_and_mul, softmax, per_token_quant and topk: functional, .out, errors.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "opreg/core/error.h"
#include "ops_test_util.h"

namespace {

using namespace opreg_test;  // NOLINT
namespace ops = opreg::ops;

const DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

// outer x n x inner decomposition of a shape around `dim`.
struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};
Split SplitAt(const std::vector<int64_t>& shape, int64_t dim) {
  Split s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim) s.outer *= shape[d];
    if (d == dim) s.n = shape[d];
    if (d > dim) s.inner *= shape[d];
  }
  return s;
}

TEST_CASE("silu_and_mul matches the double reference", "[ops][silu_and_mul]") {
  for (DType dt : kDTypes) {
    uint32_t seed = 1;
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{2}, {1, 34}, {5, 2 * 67}, {2, 3, 18}, {257, 2 * 129}}) {
      const Tensor x = Rand(shape, dt, seed++, -4, 4);
      const auto vx = Values(x);
      const int64_t d = shape.back() / 2;
      std::vector<double> ref(vx.size() / 2);
      for (size_t r = 0; r < ref.size() / d; ++r) {
        for (int64_t j = 0; j < d; ++j) {
          const double a = vx[r * 2 * d + j], b = vx[r * 2 * d + d + j];
          ref[r * d + j] = a / (1 + std::exp(-a)) * b;
        }
      }
      Tensor y = ops::silu_and_mul(x);
      CHECK(y.size(-1) == d);
      CheckClose(Values(y), ref, Tol(dt));
      std::vector<int64_t> oshape = shape;
      oshape.back() = d;
      Tensor out = opreg::empty(oshape, dt);
      CHECK(&ops::silu_and_mul_out(x, out) == &out);
      CheckClose(Values(out), ref, Tol(dt));
      CHECK(Values(x) == vx);
    }
  }
  CHECK_THROWS_WITH(ops::silu_and_mul(Rand({3, 5}, DType::kFloat32, 1)),
                    "[opreg::silu_and_mul] argument 'x' (#0): expected an even last dimension, "
                    "got shape [3, 5]");
  Tensor out = opreg::empty({3, 3}, DType::kFloat32);
  CHECK_THROWS_WITH(ops::silu_and_mul_out(Rand({3, 4}, DType::kFloat32, 1), out),
                    "[opreg::silu_and_mul.out] argument 'out' (#1): expected shape [3, 2], got "
                    "[3, 3]");
}

TEST_CASE("softmax matches the double reference along any dim", "[ops][softmax]") {
  for (DType dt : kDTypes) {
    uint32_t seed = 20;
    for (auto [shape, dim] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
             {{1}, 0}, {{7}, -1}, {{3, 33}, 1}, {{3, 33}, 0}, {{2, 5, 3}, 1}, {{300, 129}, -1}}) {
      const Tensor x = Rand(shape, dt, seed++, -30, 30);  // large values: stability matters
      const auto vx = Values(x);
      const int64_t d = dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim;
      const Split s = SplitAt(shape, d);
      std::vector<double> ref(vx.size());
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t i = 0; i < s.inner; ++i) {
          double m = -INFINITY, sum = 0;
          for (int64_t j = 0; j < s.n; ++j) m = std::max(m, vx[(o * s.n + j) * s.inner + i]);
          for (int64_t j = 0; j < s.n; ++j) sum += std::exp(vx[(o * s.n + j) * s.inner + i] - m);
          for (int64_t j = 0; j < s.n; ++j) {
            const size_t at = (o * s.n + j) * s.inner + i;
            ref[at] = std::exp(vx[at] - m) / sum;
          }
        }
      }
      INFO(Name(dt) << " dim " << dim);
      CheckClose(Values(ops::softmax(x, dim)), ref, Tol(dt), 1e-3);
      Tensor out = opreg::empty(shape, dt);
      CHECK(&ops::softmax_out(x, dim, out) == &out);
      CheckClose(Values(out), ref, Tol(dt), 1e-3);
    }
  }
  CHECK_THROWS_WITH(ops::softmax(Rand({3, 4}, DType::kFloat32, 1), 2),
                    "[opreg::softmax] argument 'dim' (#1): expected a dimension in [-2, 1], got 2");
}

// NaN where expected is NaN, the same infinity where it is infinite, else within Tol(dtype)
// relative to `exact` rounded to dtype, plus the dtype's smallest subnormal (at least 1e-30:
// results near the f32 underflow may flush to zero).
void CheckSpecial(const std::vector<double>& actual, const std::vector<double>& exact,
                  DType dtype) {
  REQUIRE(actual.size() == exact.size());
  const auto expected = Values(FromValues(exact, {static_cast<int64_t>(exact.size())}, dtype));
  const double tol = Tol(dtype);
  const double tiny = dtype == DType::kFloat16 ? 6e-8 : 1e-30;
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i << ": got " << actual[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(actual[i]));
    } else if (std::isinf(expected[i])) {
      CHECK(actual[i] == expected[i]);
    } else {
      CHECK(std::fabs(actual[i] - expected[i]) <= tol * std::fabs(expected[i]) + tiny);
    }
  }
}

// The fast paths build exp from its exponent bits, so both ends of its range, the infinities and
// NaN are checked in every lane position (rows of 37: a full vector, then a tail).
TEST_CASE("silu_and_mul and softmax at infinities, NaN and the ends of exp's range",
          "[ops][silu_and_mul][softmax]") {
  const double inf = INFINITY, nan = NAN;
  const std::vector<double> specials = {-inf, inf,   nan,  -1e4, -100, -88.8, -88.5, -88.2, -87.5,
                                        -87,  -20,   -1,   -0.0, 0.0,  1e-3,  1,     20,    80,
                                        87,   87.25, 87.5, 88.5, 100,  1e4,   -0.5,  0.5};
  for (DType dt : kDTypes) {
    INFO(Name(dt));
    // silu_and_mul: every special value in every lane position, b = 1.5.
    const int64_t d = 37, rows = static_cast<int64_t>(specials.size());
    std::vector<double> xv(rows * 2 * d);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < d; ++j) {
        xv[r * 2 * d + j] = specials[(r + j) % specials.size()];
        xv[r * 2 * d + d + j] = 1.5;
      }
    }
    const Tensor x = FromValues(xv, {rows, 2 * d}, dt);
    const auto vx = Values(x);
    std::vector<double> ref(rows * d);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < d; ++j) {
        const double a = vx[r * 2 * d + j];
        ref[r * d + j] = a / (1 + std::exp(-a)) * vx[r * 2 * d + d + j];
      }
    }
    CHECK(std::isnan(ref[0]));  // silu(-inf) = -inf / inf, as torch gives
    CheckSpecial(Values(ops::silu_and_mul(x)), ref, dt);

    // softmax rows: -inf entries give exactly 0; a row of -inf, a NaN or a +inf gives NaNs;
    // logits near 1e4 (exact differences); a spread past exp's underflow.
    const int64_t n = 37;
    std::vector<std::vector<double>> srows(5, std::vector<double>(n));
    for (int64_t j = 0; j < n; ++j) {
      srows[0][j] = j % 3 == 0 ? -inf : 0.25 * static_cast<double>(j % 7);
      srows[1][j] = -inf;
      srows[2][j] = j == 29 ? nan : 1.0;
      srows[3][j] = 9984 + 8 * static_cast<double>(j % 5);
      srows[4][j] = -static_cast<double>(j) * 3.0;  // down to -108
    }
    std::vector<double> sv;
    for (const auto& row : srows) sv.insert(sv.end(), row.begin(), row.end());
    const Tensor s = FromValues(sv, {static_cast<int64_t>(srows.size()), n}, dt);
    const auto vs = Values(s);
    std::vector<double> sref(vs.size());
    for (size_t r = 0; r < srows.size(); ++r) {
      const double* row = vs.data() + r * n;
      double m = -inf, sum = 0;
      bool has_nan = false;
      for (int64_t j = 0; j < n; ++j) {
        has_nan |= std::isnan(row[j]);
        m = std::max(m, row[j]);
      }
      if (has_nan) m = nan;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(row[j] - m);
      for (int64_t j = 0; j < n; ++j) sref[r * n + j] = std::exp(row[j] - m) / sum;
    }
    const auto got = Values(ops::softmax(s, -1));
    CheckSpecial(got, sref, dt);
    for (int64_t j = 0; j < n; j += 3) CHECK(got[j] == 0.0);  // exp(-inf) is exactly 0
  }
}

TEST_CASE("per_token_quant to int8 and fp8 with per-row scales", "[ops][quant]") {
  for (DType dt : kDTypes) {
    for (DType qt : {DType::kInt8, DType::kFloat8E4M3FN}) {
      const double qmax = qt == DType::kInt8 ? 127 : 448;
      uint32_t seed = 40;
      for (std::vector<int64_t> shape :
           {std::vector<int64_t>{1}, {1, 17}, {5, 64}, {2, 3, 9}, {300, 129}}) {
        INFO(Name(dt) << " -> " << Name(qt) << " last " << shape.back());
        const Tensor x = Rand(shape, dt, seed++, -3, 3);
        const auto vx = Values(x);
        const int64_t h = shape.back(), rows = x.numel() / h;
        auto [q, scale] = ops::per_token_quant(x, qt);
        REQUIRE(q.dtype() == qt);
        REQUIRE(q.sizes() == x.sizes());
        REQUIRE(scale.dtype() == DType::kFloat32);
        REQUIRE(scale.sizes() == opreg::IntArrayRef{rows, 1});
        const auto vq = Values(q), vs = Values(scale);
        for (int64_t r = 0; r < rows; ++r) {
          double absmax = 0;
          for (int64_t j = 0; j < h; ++j) absmax = std::max(absmax, std::fabs(vx[r * h + j]));
          CHECK(vs[r] == Approx(absmax / qmax).epsilon(1e-6));
          for (int64_t j = 0; j < h; ++j) {
            const double want = vx[r * h + j] / vs[r];
            const double got = vq[r * h + j];
            // int8: rounded to nearest; fp8: within half an ulp of 3 mantissa bits.
            const double tol = qt == DType::kInt8 ? 0.5 + 1e-3 : std::fabs(want) / 16 + 1e-2;
            if (std::fabs(got - want) > tol) {
              INFO("row " << r << " col " << j << ": q " << got << " want " << want);
              CHECK(std::fabs(got - want) <= tol);
              r = rows;
              break;
            }
          }
        }
        Tensor q2 = opreg::empty(shape, qt), s2 = opreg::empty({rows, 1}, DType::kFloat32);
        auto [rq, rs] = ops::per_token_quant_out(x, qt, q2, s2);
        CHECK(&rq == &q2);
        CHECK(&rs == &s2);
        CHECK(Values(q2) == vq);
        CHECK(Values(s2) == vs);
      }
    }
  }
  // A zero row gets scale 0 and zeros.
  auto [q, s] = ops::per_token_quant(opreg::zeros({2, 5}, DType::kFloat32), DType::kInt8);
  CHECK(Values(s) == std::vector<double>{0, 0});
  CHECK(Values(q) == std::vector<double>(10, 0));
  CHECK_THROWS_WITH(ops::per_token_quant(Rand({2, 4}, DType::kFloat32, 1), DType::kFloat16),
                    "[opreg::per_token_quant] argument 'dtype' (#1): expected i8 or f8e4m3fn, "
                    "got f16");
  Tensor qq = opreg::empty({2, 4}, DType::kInt8), bad_scale = opreg::empty({2}, DType::kFloat32);
  CHECK_THROWS_WITH(
      ops::per_token_quant_out(Rand({2, 4}, DType::kFloat32, 1), DType::kInt8, qq, bad_scale),
      "[opreg::per_token_quant.out] argument 'scale' (#3): expected shape [2, 1], got [2]");
}

TEST_CASE("topk returns sorted values and int64 indices", "[ops][topk]") {
  for (DType dt : kDTypes) {
    uint32_t seed = 60;
    for (auto [shape, k, dim] :
         std::vector<std::tuple<std::vector<int64_t>, int64_t, int64_t>>{{{1}, 1, 0},
                                                                         {{17}, 5, -1},
                                                                         {{4, 33}, 33, 1},
                                                                         {{4, 33}, 0, 1},
                                                                         {{9, 3, 5}, 2, 0},
                                                                         {{2, 7, 3}, 4, 1},
                                                                         {{200, 257}, 8, -1}}) {
      const Tensor x = Rand(shape, dt, seed++, -10, 10);
      const auto vx = Values(x);
      const int64_t d = dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim;
      const Split s = SplitAt(shape, d);
      for (bool largest : {true, false}) {
        INFO(Name(dt) << " k " << k << " dim " << dim << " largest " << largest);
        auto [values, indices] = ops::topk(x, k, dim, largest);
        REQUIRE(indices.dtype() == DType::kInt64);
        REQUIRE(values.dtype() == dt);
        REQUIRE(values.size(d) == k);
        const auto vv = Values(values), vi = Values(indices);
        bool ok = true;
        for (int64_t o = 0; o < s.outer && ok; ++o) {
          for (int64_t i = 0; i < s.inner && ok; ++i) {
            std::vector<double> slice;
            for (int64_t j = 0; j < s.n; ++j) slice.push_back(vx[(o * s.n + j) * s.inner + i]);
            std::vector<double> sorted = slice;
            std::sort(sorted.begin(), sorted.end());
            if (largest) std::reverse(sorted.begin(), sorted.end());
            std::set<int64_t> seen;
            for (int64_t j = 0; j < k; ++j) {
              const size_t at = (o * k + j) * s.inner + i;
              const int64_t idx = static_cast<int64_t>(vi[at]);
              ok = ok && vv[at] == sorted[j] && idx >= 0 && idx < s.n && slice[idx] == vv[at] &&
                   seen.insert(idx).second;
            }
          }
        }
        CHECK(ok);
        std::vector<int64_t> oshape = shape;
        oshape[d] = k;
        Tensor v2 = opreg::empty(oshape, dt), i2 = opreg::empty(oshape, DType::kInt64);
        ops::topk_out(x, k, dim, largest, v2, i2);
        CHECK(Values(v2) == vv);
        CHECK(Values(i2) == vi);
      }
      CHECK(Values(x) == vx);
    }
  }
  // Ties keep the lower index first; NaN counts as the largest.
  const Tensor t = FromValues({1, 3, 3, NAN, 0}, {5}, DType::kFloat32);
  auto [v, i] = ops::topk(t, 3);
  CHECK(Values(i) == std::vector<double>{3, 1, 2});
  auto [v2, i2] = ops::topk(t, 2, -1, false);
  CHECK(Values(i2) == std::vector<double>{4, 0});
  CHECK_THROWS_WITH(ops::topk(t, 6),
                    "[opreg::topk] argument 'k' (#1): expected a value in [0, 5], got 6");
  Tensor vals = opreg::empty({2}, DType::kFloat32), idx = opreg::empty({2}, DType::kInt32);
  CHECK_THROWS_WITH(ops::topk_out(t, 2, -1, true, vals, idx),
                    "[opreg::topk.out] argument 'indices' (#5): expected dtype i64, got i32");
}

}  // namespace
