// opreg::torch_compat's broadcasting binary ops, amax over dims, index_select, matmul, sort and
// promoteTypes (torch_compat/src/tensor_compute.cc; the stable ABI's aten table runs the same
// code). Every expectation is what torch 2.15 returns for the same call, including its errors'
// kinds and messages.
#include <torch/all.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

namespace {

template <class T>
at::Tensor Of(const std::vector<T>& v, at::ScalarType dtype, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  at::Tensor t = torch::empty(shape, dtype);
  at::Tensor staged =
      torch::empty(shape, sizeof(T) == 8 && std::is_floating_point_v<T>
                              ? at::kDouble
                              : (std::is_floating_point_v<T> ? at::kFloat : at::kLong));
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      staged.data_ptr<double>()[i] = v[i];
    } else {
      staged.data_ptr<int64_t>()[i] = v[i];
    }
  }
  t.copy_(staged);
  return t;
}

at::Tensor Ints(const std::vector<int64_t>& v, at::ScalarType dtype = at::kLong,
                std::vector<int64_t> shape = {}) {
  return Of<int64_t>(v, dtype, std::move(shape));
}
at::Tensor Doubles(const std::vector<double>& v, at::ScalarType dtype = at::kFloat,
                   std::vector<int64_t> shape = {}) {
  return Of<double>(v, dtype, std::move(shape));
}

std::vector<int64_t> IntValues(const at::Tensor& t) {
  at::Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}
std::vector<double> DoubleValues(const at::Tensor& t) {
  at::Tensor c = t.to(at::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// Equal, NaN matching NaN and -0.0 told from 0.0.
void CheckSame(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else {
      CHECK(got[i] == want[i]);
      CHECK(std::signbit(got[i]) == std::signbit(want[i]));
    }
  }
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("sub wraps integers, promotes uint8 with int8 to int16, refuses bools",
          "[torch_compat][compute]") {
  at::Tensor r = at::sub(Ints({100, -100}, at::kChar), Ints({-100, 100}, at::kChar));
  CHECK(r.scalar_type() == at::kChar);
  CHECK(IntValues(r) == std::vector<int64_t>{-56, 56});
  r = Ints({200, 3}, at::kByte).sub(Ints({-100, 100}, at::kChar), 2);
  CHECK(r.scalar_type() == at::kShort);
  CHECK(IntValues(r) == std::vector<int64_t>{400, -197});
  CHECK(DoubleValues(at::subtract(Doubles({1.5, 2}), Doubles({0.5}), 3)) ==
        std::vector<double>{0, 0.5});
  CHECK_THROWS_WITH(at::sub(Ints({1}, at::kBool), Ints({0}, at::kBool)),
                    Catch::Contains("with two bool tensors is not supported"));
  CHECK_THROWS_WITH(at::sub(Ints({1}), Ints({1}), 0.5),
                    Catch::Contains("argument alpha must not be a floating point number"));
  CHECK_THROWS_WITH(at::sub(Doubles({1, 2, 3}), Doubles({1, 2})),
                    Catch::Contains("The size of tensor a (3) must match the size of tensor b "
                                    "(2) at non-singleton dimension 0"));
}

TEST_CASE("shifts past the width give 0 (left) or the sign (right), as libtorch's",
          "[torch_compat][compute]") {
  CHECK(IntValues(at::bitwise_left_shift(Ints({1, 1, -1, 3, 5}, at::kInt),
                                         Ints({31, 32, 1, -1, 0}, at::kInt))) ==
        std::vector<int64_t>{-2147483648LL, 0, -2, 0, 5});
  CHECK(IntValues(at::bitwise_right_shift(Ints({-128, 64, 5, -5, 100}, at::kChar),
                                          Ints({7, 8, -1, 1, 9}, at::kChar))) ==
        std::vector<int64_t>{-1, 0, 0, -3, 0});
  CHECK(IntValues(at::bitwise_right_shift(Ints({200, 255}, at::kByte), Ints({7, 8}, at::kByte))) ==
        std::vector<int64_t>{1, 0});
  CHECK(IntValues(at::bitwise_left_shift(Ints({200, 255}, at::kByte), Ints({1, 8}, at::kByte))) ==
        std::vector<int64_t>{144, 0});
  CHECK(IntValues(at::bitwise_and(Ints({12, 10}), Ints({10}))) == std::vector<int64_t>{8, 10});
  CHECK(IntValues(at::bitwise_or(Ints({12, 1}, at::kInt), Ints({3, 2}, at::kInt))) ==
        std::vector<int64_t>{15, 3});
  try {
    at::bitwise_and(Doubles({1}), Doubles({2}));
    FAIL("bitwise_and of floats was accepted");
  } catch (const c10::NotImplementedError& e) {
    CHECK_THAT(e.what(), Catch::Contains("\"bitwise_and_cpu\" not implemented for 'Float'"));
  }
}

TEST_CASE("floor_divide is Python's //, for integers and floats", "[torch_compat][compute]") {
  CHECK(IntValues(at::floor_divide(Ints({7, -7, 7, -7}), Ints({2, 2, -2, -2}))) ==
        std::vector<int64_t>{3, -4, -4, 3});
  CheckSame(DoubleValues(at::floor_divide(Doubles({7.5, -7.5, 1.0, -0.0, 1.0, -1.0}),
                                          Doubles({2.0, 2.0, 0.0, 3.0, -3.0, kInf}))),
            {3, -4, kInf, -0.0, -1, -1});
  CHECK_THROWS_WITH(at::floor_divide(Ints({1, 2}), Ints({1, 0})),
                    Catch::Contains("ZeroDivisionError"));
}

TEST_CASE("amax over dims: NaN wins, empty dims reduce everything", "[torch_compat][compute]") {
  const at::Tensor x = Doubles({1, kNaN, 3, 4, 5, -6}, at::kFloat, {2, 3});
  CheckSame(DoubleValues(at::amax(x, {1})), {kNaN, 5});
  CheckSame(DoubleValues(x.amax({0})), {4, kNaN, 3});
  CheckSame(DoubleValues(at::amax(x, {0, 1})), {kNaN});
  const at::Tensor all = at::amax(x, {}, /*keepdim=*/true);
  CHECK(all.sizes() == at::IntArrayRef({1, 1}));
  CHECK(IntValues(at::amax(Ints({3, 9, -2, 7}, at::kInt, {2, 2}), {-1})) ==
        std::vector<int64_t>{9, 7});
  CHECK_THROWS_WITH(at::amax(torch::empty({2, 0}), {1}),
                    Catch::Contains("Expected reduction dim 1 to have non-zero size"));
}

TEST_CASE("index_select copies rows of any dtype and checks the indices",
          "[torch_compat][compute]") {
  const at::Tensor x = Ints({1, 2, 3, 4, 5, 6}, at::kLong, {2, 3});
  const at::Tensor r = at::index_select(x, 1, Ints({2, 0, 2}));
  CHECK(r.sizes() == at::IntArrayRef({2, 3}));
  CHECK(IntValues(r) == std::vector<int64_t>{3, 1, 3, 6, 4, 6});
  const at::Tensor h = Doubles({0.5, -1, 2, 8}, at::kHalf, {4});
  CHECK(DoubleValues(h.index_select(0, Ints({3, 1}, at::kInt))) == std::vector<double>{8, -1});
  try {
    at::index_select(Ints({1, 2}), 0, Ints({2}));
    FAIL("an index past the end was accepted");
  } catch (const c10::IndexError& e) {
    CHECK_THAT(e.what(), Catch::Contains("index out of range in self"));
  }
}

TEST_CASE("matmul: vectors, matrices and broadcast batches", "[torch_compat][compute]") {
  at::Tensor a = torch::arange(12, at::kFloat).reshape({2, 1, 2, 3});
  at::Tensor b = torch::arange(18, at::kFloat).reshape({3, 3, 2});
  const at::Tensor r = at::matmul(a, b);
  CHECK(r.sizes() == at::IntArrayRef({2, 3, 2, 2}));
  CHECK(DoubleValues(r.select(0, 1).select(0, 2)) == std::vector<double>{298, 319, 424, 454});
  CHECK(DoubleValues(Doubles({1, 2, 3}).matmul(torch::arange(6, at::kFloat).reshape({3, 2}))) ==
        std::vector<double>{16, 22});
  const at::Tensor dot = at::matmul(Ints({1, 2, 3}), Ints({4, 5, 6}));
  CHECK(dot.dim() == 0);
  CHECK(IntValues(dot) == std::vector<int64_t>{32});
  CHECK_THROWS_WITH(at::matmul(torch::empty({2, 3}), torch::empty({2, 3})),
                    Catch::Contains("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"));
}

TEST_CASE("sort: stable, NaN last ascending and first descending", "[torch_compat][compute]") {
  const at::Tensor x = Doubles({3, kNaN, 1, 3, -kInf});
  auto [v, i] = at::sort(x);
  CheckSame(DoubleValues(v), {-kInf, 1, 3, 3, kNaN});
  CHECK(IntValues(i) == std::vector<int64_t>{4, 2, 0, 3, 1});
  std::tie(v, i) = x.sort(/*stable=*/true, 0, /*descending=*/true);
  CheckSame(DoubleValues(v), {kNaN, 3, 3, 1, -kInf});
  CHECK(IntValues(i) == std::vector<int64_t>{1, 0, 3, 2, 4});
  std::tie(v, i) = at::sort(Ints({2, 1, 0, 5}, at::kInt, {2, 2}), 0, true);
  CHECK(v.scalar_type() == at::kInt);
  CHECK(IntValues(v) == std::vector<int64_t>{2, 5, 0, 1});
  CHECK(IntValues(i) == std::vector<int64_t>{0, 1, 1, 0});
}

TEST_CASE("promoteTypes follows torch's table and its refusals", "[torch_compat][compute]") {
  CHECK(c10::promoteTypes(at::kByte, at::kChar) == at::kShort);
  CHECK(c10::promoteTypes(at::kHalf, at::kBFloat16) == at::kFloat);
  CHECK(c10::promoteTypes(c10::ScalarType::UInt16, at::kHalf) == at::kHalf);
  CHECK(c10::promoteTypes(at::kBool, at::kInt) == at::kInt);
  CHECK(c10::promoteTypes(at::kLong, at::kFloat) == at::kFloat);
  CHECK_THROWS_WITH(c10::promoteTypes(c10::ScalarType::UInt16, at::kChar),
                    Catch::Contains("Promotion for uint16, uint32, uint64 types is not "
                                    "supported, attempted to promote UInt16 and Char"));
  CHECK_THROWS_WITH(c10::promoteTypes(at::kBool, c10::ScalarType::UInt16),
                    Catch::Contains("attempted to promote Bool and UInt16"));
  CHECK_THROWS_WITH(c10::promoteTypes(c10::ScalarType::Float8_e4m3fn, at::kFloat),
                    Catch::Contains("Promotion for Float8 Types is not supported, attempted to "
                                    "promote Float8_e4m3fn and Float"));
}
