// Unboxed kernels with every schema type kernel libraries use: tuples (and optional tuples),
// str[] as argument and return, float parameters, and the enums ScalarType, Layout and
// MemoryFormat as C++ types; called boxed and typed, with precise messages on bad input.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "opreg/core/layout.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::Dispatcher;
using opreg::DispatchKey;
using opreg::DType;
using opreg::IValue;
using opreg::Layout;
using opreg::Library;
using opreg::MemoryFormat;
using opreg::Tensor;

// vLLM-style: `(int, int)? block_shape=None`.
int64_t BlockArea(const Tensor&, const std::optional<std::tuple<int64_t, int64_t>>& block) {
  return block ? std::get<0>(*block) * std::get<1>(*block) : -1;
}

std::vector<std::string> Tagged(const std::vector<std::string>& names, double scale) {
  std::vector<std::string> out;
  for (const std::string& n : names) out.push_back(n + "@" + std::to_string(scale).substr(0, 3));
  return out;
}

double Narrowed(float x) { return x; }

int64_t Codes(DType d, Layout l, MemoryFormat f) {
  return static_cast<int64_t>(opreg::TorchScalarTypeCode(d)) * 100 + static_cast<int64_t>(l) * 10 +
         static_cast<int64_t>(f);
}

struct Ops {
  Library lib{Library::FRAGMENT, "ktypes", std::nullopt, "ktypes.cc", 1};
  Ops() {
    lib.def("area(Tensor x, (int, int)? block_shape=None) -> int");
    lib.impl("area", DispatchKey::kCPU, &BlockArea);
    lib.def("tagged(str[] names, float scale) -> str[]", &Tagged);
    lib.def("narrowed(float x) -> float", &Narrowed);
    lib.def("codes(ScalarType dtype, Layout layout, MemoryFormat memory_format) -> int", &Codes);
  }
};

TEST_CASE("tuples and optional tuples reach unboxed kernels", "[dispatch][types]") {
  Ops ops;
  auto op = Dispatcher::Get().FindOpOrThrow("ktypes::area");
  Tensor x = opreg::zeros({2}, DType::kFloat32);
  CHECK(op.CallBoxed({IValue(x), IValue::Tuple({IValue(3), IValue(4)})})[0].toInt() == 12);
  CHECK(op.CallBoxed({IValue(x)})[0].toInt() == -1);
  auto typed =
      op.typed<int64_t(const Tensor&, const std::optional<std::tuple<int64_t, int64_t>>&)>();
  CHECK(typed.call(x, std::make_tuple(int64_t{5}, int64_t{6})) == 30);
  CHECK(typed.call(x, std::nullopt) == -1);
  CHECK_THROWS_WITH(op.CallBoxed({IValue(x), IValue::Tuple({IValue(1.5), IValue(8)})}),
                    "[ktypes::area] argument 'block_shape' (#1): expected (int, int)?, got "
                    "(float, int)");
  // A kernel whose tuple does not fit the schema is refused at registration.
  CHECK_THROWS_WITH(ops.lib.impl("area", DispatchKey::kMeta,
                                 [](const Tensor&, const std::optional<std::tuple<int64_t>>&) {
                                   return int64_t{0};
                                 }),
                    Catch::Contains("Type mismatch in argument 2: (int)? vs. (int, int)?"));
}

TEST_CASE("str[] as argument and return; float parameters", "[dispatch][types]") {
  Ops ops;
  auto op = Dispatcher::Get().FindOpOrThrow("ktypes::tagged");
  IValue r = op.CallBoxed({IValue(std::vector<std::string>{"a", "b"}), IValue(2.0)})[0];
  REQUIRE(r.isStringList());
  CHECK(r.toStringList() == std::vector<std::string>{"a@2.0", "b@2.0"});
  CHECK(op.typed<std::vector<std::string>(const std::vector<std::string>&, double)>().call(
            {"z"}, 1.5) == std::vector<std::string>{"z@1.5"});
  CHECK_THROWS_WITH(op.CallBoxed({IValue(std::vector<int64_t>{1}), IValue(2.0)}),
                    "[ktypes::tagged] argument 'names' (#0): expected str[], got int[]");
  auto narrowed = Dispatcher::Get().FindOpOrThrow("ktypes::narrowed");
  CHECK(narrowed.CallBoxed({IValue(0.1)})[0].toDouble() == static_cast<double>(0.1f));
  CHECK(narrowed.CallBoxed({IValue(3)})[0].toDouble() == 3.0);  // an int literal for float
}

TEST_CASE("ScalarType, Layout and MemoryFormat as C++ enums", "[dispatch][types]") {
  Ops ops;
  auto op = Dispatcher::Get().FindOpOrThrow("ktypes::codes");
  // PyTorch's codes: float32 is 6, sparse_coo 1, channels_last 2.
  CHECK(op.CallBoxed({IValue(6), IValue(1), IValue(2)})[0].toInt() == 612);
  CHECK(op.typed<int64_t(DType, Layout, MemoryFormat)>().call(DType::kBFloat16, Layout::kStrided,
                                                              MemoryFormat::kContiguous) == 1500);
  CHECK_THROWS_WITH(op.CallBoxed({IValue(6), IValue(9), IValue(0)}),
                    "[ktypes::codes] argument 'layout' (#1): expected a Layout code (0 to 7), "
                    "got int");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(6), IValue(0), IValue(7)}),
                    "[ktypes::codes] argument 'memory_format' (#2): expected a MemoryFormat code "
                    "(0 to 3), got int");
  // A ScalarType opreg has no dtype for is named (complex64 is 9), an unknown code by its number.
  CHECK_THROWS_WITH(op.CallBoxed({IValue(9), IValue(0), IValue(0)}),
                    "[ktypes::codes] argument 'dtype' (#0): expected a ScalarType that opreg "
                    "supports, got torch.complex64 (ScalarType 9)");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(999), IValue(0), IValue(0)}),
                    "[ktypes::codes] argument 'dtype' (#0): expected a ScalarType that opreg "
                    "supports, got ScalarType code 999");
}

}  // namespace
