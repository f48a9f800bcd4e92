// One argument binder (ArgumentBinding) for every caller: the boxed keyword call and the graph
// recorder bind the same calls the same way and refuse the same mistakes with the same words
// (opreg.ops from Python uses it too: tests/python/test_errors.py).
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/argument_binding.h"
#include "opreg/dispatch/library.h"
#include "opreg/planner/graph.h"

namespace {

using opreg::ArgumentBinding;
using opreg::Dispatcher;
using opreg::DType;
using opreg::GraphArg;
using opreg::GraphRecorder;
using opreg::IValue;
using opreg::Library;
using opreg::Tensor;

// The message of what `f` throws ("" when it does not).
template <class F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const opreg::Error& e) {
    return e.message();
  }
  return "";
}

TEST_CASE("the binder's rules, in Python's words", "[binding]") {
  Library lib(Library::DEF, "bind", std::nullopt, "b.cc", 1);
  lib.def("f(Tensor x, int k=2, *, float alpha=1.) -> Tensor");
  lib.impl("f", opreg::DispatchKey::kCPU,
           [](const Tensor& x, int64_t, double) { return x.clone(); });
  lib.impl("f", opreg::DispatchKey::kMeta, [](const Tensor& x, int64_t, double) {
    return opreg::empty(x.sizes(), x.dtype(), opreg::Device::meta());
  });
  const opreg::FunctionSchema& schema = Dispatcher::Get().FindOpOrThrow("bind::f").schema();
  const ArgumentBinding binding(schema, "bind::f");
  CHECK(binding.num_positional() == 2);
  CHECK_NOTHROW(binding.CheckPositionalCount(2));
  CHECK(ErrorOf([&] { binding.CheckPositionalCount(3); }) ==
        "[bind::f] takes 2 positional arguments but 3 were given");
  CHECK(binding.KeywordSlot("alpha", [](size_t) { return false; }) == 2);
  CHECK(ErrorOf([&] { binding.KeywordSlot("beta", [](size_t) { return false; }); }) ==
        "[bind::f] got an unexpected keyword argument 'beta'");
  CHECK(ErrorOf([&] { binding.KeywordSlot("x", [](size_t i) { return i == 0; }); }) ==
        "[bind::f] got multiple values for argument 'x' (#0)");
  CHECK(binding.DefaultOf(1).toInt() == 2);
  CHECK(ErrorOf([&] { binding.DefaultOf(0); }).find("argument 'x' (#0)") != std::string::npos);

  // The boxed keyword call and the graph recorder: the same bindings, the same refusals.
  const auto op = Dispatcher::Get().FindOpOrThrow("bind::f");
  const Tensor x = opreg::full({3}, 1.0, DType::kFloat32);
  GraphRecorder rec;
  const opreg::Value v = rec.AddInput(x);
  struct Case {
    std::vector<IValue> args;
    std::vector<std::pair<std::string, IValue>> kwargs;
  };
  const std::vector<Case> mistakes = {
      {{IValue(x), IValue(int64_t{3}), IValue(0.5)}, {}},          // alpha is keyword-only
      {{IValue(x)}, {{"beta", IValue(0.5)}}},                      // no such argument
      {{IValue(x)}, {{"x", IValue(x)}}},                           // x twice
      {{}, {{"k", IValue(int64_t{3})}}},                           // x missing
  };
  for (const Case& c : mistakes) {
    std::vector<GraphArg> graph_args;
    for (const IValue& a : c.args) {
      graph_args.push_back(a.isTensor() ? GraphArg(v) : GraphArg(a));
    }
    std::vector<std::pair<std::string, GraphArg>> graph_kwargs;
    for (const auto& [name, a] : c.kwargs) {
      graph_kwargs.emplace_back(name, a.isTensor() ? GraphArg(v) : GraphArg(a));
    }
    const std::string boxed = ErrorOf([&] { op.CallBoxed(c.args, c.kwargs); });
    const std::string graph =
        ErrorOf([&] { rec.Call(op, std::move(graph_args), std::move(graph_kwargs)); });
    INFO(boxed);
    CHECK(!boxed.empty());
    CHECK(graph == boxed);
  }
  // A good call binds the same way on both paths (defaults filled, keywords placed).
  opreg::Stack out = op.CallBoxed({IValue(x)}, {{"alpha", IValue(0.5)}});
  CHECK(out.size() == 1);
  CHECK(rec.Call(op, {GraphArg(v)}, {{"alpha", GraphArg(IValue(0.5))}}).size() == 1);
}

}  // namespace
