// Calling ops: key computation, typed and boxed calls, defaults and keyword arguments,
// composite kernels, fallbacks, overrides, out-variant links and symmetric-memory arguments.
#include <catch2/catch.hpp>

#include <optional>
#include <tuple>

#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::Device;
using opreg::Dispatcher;
using opreg::DispatchKey;
using opreg::DType;
using opreg::IValue;
using opreg::Library;
using opreg::OperatorHandle;
using opreg::Stack;
using opreg::Tensor;

// Kernels that say which one ran by filling their output.
Tensor Fill(const Tensor& x, double v) { return opreg::full(x.sizes(), v, x.dtype(), x.device()); }
Tensor CpuKernel(const Tensor& x, int64_t k) { return Fill(x, 1.0 + k); }
Tensor MetaKernel(const Tensor& x, int64_t k) { return opreg::empty_like(x); }
Tensor CompositeKernel(const Tensor& x, int64_t k) { return Fill(x, 100.0 + k); }

Tensor Cpu(std::vector<int64_t> sizes = {3}) { return opreg::zeros(sizes, DType::kFloat32); }
Tensor Meta(std::vector<int64_t> sizes = {3}) {
  return opreg::empty(sizes, DType::kFloat32, Device::meta());
}

struct Fixture {
  Library lib{Library::FRAGMENT, "dtest", std::nullopt, "fixture.cc", 1};
};

TEST_CASE("typed calls dispatch on the tensors' device", "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k=1) -> Tensor")
      .impl("f", DispatchKey::kCPU, &CpuKernel)
      .impl("f", DispatchKey::kMeta, &MetaKernel);
  auto op = Dispatcher::Get().FindOpOrThrow("dtest::f").typed<Tensor(const Tensor&, int64_t)>();
  CHECK(op.call(Cpu(), 2).at({0}) == 3.0);
  Tensor m = op.call(Meta({2, 5}), 2);
  CHECK(m.device() == Device::meta());
  CHECK(m.sizes() == opreg::IntArrayRef{2, 5});
}

TEST_CASE("boxed calls fill defaults, bind keywords and type-check", "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k=1, *, float scale=2.) -> Tensor")
      .impl("f", DispatchKey::kCPU,
            [](const Tensor& x, int64_t k, double scale) { return Fill(x, k * scale); });
  OperatorHandle op = Dispatcher::Get().FindOpOrThrow("dtest::f");
  CHECK(op.CallBoxed({IValue(Cpu())})[0].toTensor().at({0}) == 2.0);
  CHECK(op.CallBoxed({IValue(Cpu()), IValue(3)})[0].toTensor().at({0}) == 6.0);
  CHECK(op.CallBoxed({IValue(Cpu())}, {{"scale", IValue(0.5)}, {"k", IValue(4)}})[0].toTensor().at(
            {0}) == 2.0);
  // An int where the schema says float is converted.
  CHECK(op.CallBoxed({IValue(Cpu())}, {{"scale", IValue(3)}})[0].toTensor().at({0}) == 3.0);
  Stack stack{IValue(Cpu()), IValue(2), IValue(1.5)};
  op.CallBoxed(&stack);
  REQUIRE(stack.size() == 1);
  CHECK(stack[0].toTensor().at({0}) == 3.0);

  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu()), IValue(1.5)}),
                    "[dtest::f] argument 'k' (#1): expected int, got float");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(3)}),
                    "[dtest::f] argument 'x' (#0): expected Tensor, got int");
  CHECK_THROWS_WITH(op.CallBoxed(std::vector<IValue>{}),
                    "[dtest::f] argument 'x' (#0): expected a value, got nothing (the argument "
                    "is missing and has no default)");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu()), IValue(1), IValue(2.0)}),
                    "[dtest::f] takes 2 positional arguments but 3 were given");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu())}, {{"nope", IValue(1)}}),
                    "[dtest::f] got an unexpected keyword argument 'nope'");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu())}, {{"x", IValue(Cpu())}}),
                    "[dtest::f] got multiple values for argument 'x' (#0)");
  Stack too_many{IValue(Cpu()), IValue(1), IValue(1.0), IValue(1)};
  CHECK_THROWS_WITH(op.CallBoxed(&too_many), "[dtest::f] expected at most 3 arguments, got 4");
}

TEST_CASE("boxed checks: tuple arity and elements, undefined tensors, no arguments",
          "[dispatch]") {
  Fixture f;
  f.lib.def("t(Tensor x, (int, int)? block=None) -> int")
      .impl("t", DispatchKey::kCPU, [](const OperatorHandle&, Stack* s) {
        const IValue block = (*s)[1];
        s->clear();
        s->push_back(IValue(block.isNone() ? int64_t{-1}
                                           : block.toTuple()[0].toInt() * 10 +
                                                 block.toTuple()[1].toInt()));
      });
  OperatorHandle op = Dispatcher::Get().FindOpOrThrow("dtest::t");
  CHECK(op.CallBoxed({IValue(Cpu()), IValue::Tuple({IValue(1), IValue(2)})})[0].toInt() == 12);
  CHECK(op.CallBoxed({IValue(Cpu())})[0].toInt() == -1);
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu()), IValue::Tuple({IValue(1)})}),
                    "[dtest::t] argument 'block' (#1): expected (int, int)?, got (int,)");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu()), IValue::Tuple({IValue(1.5), IValue(8)})}),
                    "[dtest::t] argument 'block' (#1): expected (int, int)?, got (float, int)");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Tensor())}),
                    "[dtest::t] argument 'x' (#0): expected Tensor, got an undefined Tensor "
                    "(default-constructed)");
  // Typed calls too.
  CHECK_THROWS_WITH(
      op.typed<int64_t(const Tensor&, const std::optional<std::tuple<int64_t, int64_t>>&)>().call(
          Tensor(), std::nullopt),
      "[dtest::t] argument 'x' (#0): expected Tensor, got an undefined Tensor "
      "(default-constructed)");

  // `Tensor?` takes an undefined tensor as None, as libtorch does.
  f.lib.def("o(Tensor? x) -> bool").impl("o", DispatchKey::kCPU, [](const OperatorHandle&,
                                                                   Stack* s) {
    const bool none = (*s)[0].isNone();
    s->clear();
    s->push_back(IValue(none));
  });
  CHECK(Dispatcher::Get().FindOpOrThrow("dtest::o").CallBoxed({IValue(Tensor())})[0].toBool());

  // An op without arguments: `CallBoxed({})` is a call with none (not a null stack).
  f.lib.def("n() -> int", [] { return int64_t{7}; });
  CHECK(Dispatcher::Get().FindOpOrThrow("dtest::n").CallBoxed({})[0].toInt() == 7);
}

TEST_CASE("a typed handle must fit the schema and the kernels' signature", "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k) -> Tensor").impl("f", DispatchKey::kCPU, &CpuKernel);
  OperatorHandle op = Dispatcher::Get().FindOpOrThrow("dtest::f");
  CHECK_THROWS_WITH(op.typed<Tensor(const Tensor&, double)>(),
                    Catch::StartsWith("[dtest::f] typed<opreg::Tensor (opreg::Tensor const&, "
                                      "double)>() does not fit the schema dtest::f(Tensor x, int "
                                      "k) -> Tensor: argument 'k' (#1) is float in C++ but int in "
                                      "the schema"));
  CHECK_THROWS_WITH(op.typed<Tensor(Tensor, int64_t)>(),
                    Catch::StartsWith("Tried to access or call an operator with a wrong "
                                      "signature.\n  operator: dtest::f(Tensor x, int k) -> "
                                      "Tensor"));
  CHECK_THROWS_WITH(op.typed<Tensor(Tensor, int64_t)>(),
                    Catch::Contains("correct signature:  opreg::Tensor (opreg::Tensor const&, "
                                    "long)"));
}

TEST_CASE("boxed kernels are called from typed handles and vice versa", "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k) -> Tensor")
      .impl("f", DispatchKey::kCPU, [](const OperatorHandle& op, Stack* s) {
        const int64_t k = s->back().toInt();
        Tensor x = (*s)[s->size() - 2].toTensor();
        s->resize(s->size() - 2);
        s->push_back(IValue(Fill(x, static_cast<double>(k * 10))));
      });
  auto typed = Dispatcher::Get().FindOpOrThrow("dtest::f").typed<Tensor(const Tensor&, int64_t)>();
  CHECK(typed.call(Cpu(), 4).at({0}) == 40.0);
}

TEST_CASE("composite kernels serve every backend; direct kernels win", "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k) -> Tensor").impl("f", &CompositeKernel);  // no key: composite
  auto op = Dispatcher::Get().FindOpOrThrow("dtest::f").typed<Tensor(const Tensor&, int64_t)>();
  CHECK(op.call(Cpu(), 1).at({0}) == 101.0);
  {
    Library cpu(Library::IMPL, "dtest", DispatchKey::kCPU, "cpu.cc", 1);
    cpu.impl("f", &CpuKernel);
    CHECK(op.call(Cpu(), 1).at({0}) == 2.0);
  }
  CHECK(op.call(Cpu(), 1).at({0}) == 101.0);  // deregistration restores the composite
}

TEST_CASE("KernelOriginOf says what serves each runtime key", "[dispatch]") {
  using opreg::KernelOrigin;
  Fixture f;
  Dispatcher& d = Dispatcher::Get();
  auto origin = [&](DispatchKey key) { return *d.KernelOriginOf("dtest::g", key); };
  f.lib.def("g(Tensor x, int k) -> Tensor");
  CHECK(origin(DispatchKey::kMeta) == KernelOrigin::kNone);
  {
    Library any(Library::FRAGMENT, "dtest", std::nullopt, "any.cc", 1);
    any.impl("g", &CompositeKernel);  // no key: a catch-all
    CHECK(origin(DispatchKey::kMeta) == KernelOrigin::kCatchAll);
    Library implicit(Library::IMPL, "dtest", DispatchKey::kCompositeImplicit, "ci.cc", 1);
    implicit.impl("g", &CompositeKernel);
    CHECK(origin(DispatchKey::kMeta) == KernelOrigin::kCompositeImplicit);
    Library expl(Library::IMPL, "dtest", DispatchKey::kCompositeExplicit, "ce.cc", 1);
    expl.impl("g", &CompositeKernel);
    CHECK(origin(DispatchKey::kMeta) == KernelOrigin::kCompositeExplicit);
    Library meta(Library::IMPL, "dtest", DispatchKey::kMeta, "meta.cc", 1);
    meta.impl("g", &MetaKernel);
    CHECK(origin(DispatchKey::kMeta) == KernelOrigin::kOwnKey);
    CHECK(origin(DispatchKey::kCPU) == KernelOrigin::kCompositeExplicit);
  }
  {
    Library fb(Library::IMPL, "_", DispatchKey::kMeta, "fb.cc", 1);
    fb.fallback([](const OperatorHandle&, Stack*) {});
    CHECK(origin(DispatchKey::kMeta) == KernelOrigin::kFallback);
  }
  CHECK(origin(DispatchKey::kMeta) == KernelOrigin::kNone);  // every registration gone again
  CHECK_THAT(std::string(d.KernelOriginOf("dtest::g", DispatchKey::kCompositeExplicit)
                             .status()
                             .message()),
             Catch::Contains("not a runtime key"));
  CHECK(d.KernelOriginOf("dtest::nope", DispatchKey::kMeta).status().code() ==
        absl::StatusCode::kNotFound);
}

TEST_CASE("a kernel's error names the op unless it already names one", "[dispatch]") {
  Fixture f;
  f.lib.def("inner(Tensor x) -> Tensor")
      .impl("inner", DispatchKey::kCPU, [](const Tensor& x) -> Tensor {
        OPREG_THROW(kValue, "inner refuses");
      });
  f.lib.def("picky(Tensor x, int k) -> Tensor")
      .impl("picky", DispatchKey::kCPU, [](const Tensor& x, int64_t k) -> Tensor {
        OPREG_CHECK_VALUE(k > 0, "k must be positive, got ", k);
        if (k == 2) {  // an op the kernel calls fails: that op is the one named
          Dispatcher::Get().FindOpOrThrow("dtest::inner").CallBoxed({IValue(x)});
        }
        return x;
      });
  auto op = Dispatcher::Get().FindOpOrThrow("dtest::picky");
  CHECK_THROWS_WITH(op.typed<Tensor(const Tensor&, int64_t)>().call(Cpu(), 0),
                    "[dtest::picky] k must be positive, got 0");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu()), IValue(-3)}),
                    "[dtest::picky] k must be positive, got -3");
  CHECK_THROWS_AS(op.CallBoxed({IValue(Cpu()), IValue(-3)}), opreg::Error);
  try {
    op.CallBoxed({IValue(Cpu()), IValue(-3)});
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kValue);  // the kind is kept
  }
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu()), IValue(2)}), "[dtest::inner] inner refuses");
}

TEST_CASE("overriding a kernel warns; removing the new one restores the old", "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k) -> Tensor").impl("f", DispatchKey::kCPU, &CpuKernel);
  auto op = Dispatcher::Get().FindOpOrThrow("dtest::f").typed<Tensor(const Tensor&, int64_t)>();
  {
    Library override_lib(Library::IMPL, "dtest", DispatchKey::kCPU, "o.cc", 1);
    override_lib.impl(
        "f", +[](const Tensor& x, int64_t k) { return Fill(x, -1); });
    CHECK(op.call(Cpu(), 1).at({0}) == -1.0);
  }
  CHECK(op.call(Cpu(), 1).at({0}) == 2.0);
}

TEST_CASE("a missing kernel names the backends that have one", "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k) -> Tensor").impl("f", DispatchKey::kCPU, &CpuKernel, "k.cc", 7);
  auto op = Dispatcher::Get().FindOpOrThrow("dtest::f").typed<Tensor(const Tensor&, int64_t)>();
  CHECK_THROWS_WITH(op.call(Meta(), 1),
                    "Could not run 'dtest::f' with arguments from the 'Meta' backend. This could "
                    "be because the operator doesn't exist for this backend. 'dtest::f' is only "
                    "available for these backends: [CPU].\nCPU: registered at k.cc:7");
}

TEST_CASE("prepared boxed calls run the device's kernel and still reach interceptors",
          "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k) -> Tensor")
      .impl("f", DispatchKey::kCPU, &CpuKernel)
      .impl("f", DispatchKey::kMeta, &MetaKernel);
  f.lib.def("g(Tensor x) -> (Tensor, Tensor)")
      .impl("g", DispatchKey::kCPU, [](const OperatorHandle&, Stack* stack) { stack->clear(); });
  OperatorHandle op = Dispatcher::Get().FindOpOrThrow("dtest::f");
  Stack s{IValue(Cpu()), IValue(int64_t{4})};
  op.CallBoxedPrepared(&s, opreg::DeviceType::kCPU);
  REQUIRE(s.size() == 1);
  CHECK(s[0].toTensor().at({0}) == 5.0);
  s = {IValue(Meta({2, 3})), IValue(int64_t{1})};
  op.CallBoxedPrepared(&s, opreg::DeviceType::kMeta);
  CHECK(s.at(0).toTensor().device() == Device::meta());
  // A device without a kernel, and a kernel that leaves the wrong number of returns.
  s = {IValue(Meta())};
  CHECK_THROWS_WITH(
      Dispatcher::Get().FindOpOrThrow("dtest::g").CallBoxedPrepared(&s, opreg::DeviceType::kMeta),
      Catch::StartsWith("Could not run 'dtest::g' with arguments from the 'Meta' backend"));
  s = {IValue(Cpu())};
  CHECK_THROWS_WITH(
      Dispatcher::Get().FindOpOrThrow("dtest::g").CallBoxedPrepared(&s, opreg::DeviceType::kCPU),
      "[dtest::g] the CPU kernel left 0 values on the stack, but the schema declares 2 returns");
  // An installed interceptor gets the call instead of the kernel.
  struct Recorder : opreg::CallInterceptor {
    int calls = 0;
    void Intercept(const OperatorHandle&, Stack* stack) override {
      ++calls;
      *stack = {IValue(Cpu({7}))};
    }
  } recorder;
  {
    opreg::CallInterceptorGuard guard(&recorder);
    s = {IValue(Cpu()), IValue(int64_t{1})};
    op.CallBoxedPrepared(&s, opreg::DeviceType::kCPU);
  }
  CHECK(recorder.calls == 1);
  CHECK(s.at(0).toTensor().sizes() == opreg::IntArrayRef{7});
}

TEST_CASE("fallbacks run for ops without a kernel of their own", "[dispatch]") {
  Fixture f;
  f.lib.def("f(Tensor x, int k) -> Tensor");
  auto op = Dispatcher::Get().FindOpOrThrow("dtest::f").typed<Tensor(const Tensor&, int64_t)>();
  CHECK_THROWS(op.call(Meta(), 1));
  {
    Library fb(Library::IMPL, "_", DispatchKey::kMeta, "fb.cc", 1);
    fb.fallback([](const OperatorHandle& handle, Stack* s) {
      // A generic Meta fallback: return an empty tensor shaped like the first argument.
      Tensor x = (*s)[s->size() - handle.schema().arguments().size()].toTensor();
      s->resize(s->size() - handle.schema().arguments().size());
      s->push_back(IValue(opreg::empty_like(x)));
    });
    CHECK(op.call(Meta({7}), 1).sizes() == opreg::IntArrayRef{7});
    Library fb2(Library::IMPL, "_", DispatchKey::kMeta, "fb2.cc", 2);
    CHECK_THROWS_WITH(fb2.fallback([](const OperatorHandle&, Stack*) {}),
                      Catch::StartsWith("Tried to register multiple backend fallbacks for the "
                                        "same dispatch key Meta; previous registration "
                                        "registered at "));
  }
  CHECK_THROWS(op.call(Meta(), 1));
}

TEST_CASE("the key comes from every tensor argument; mixed devices are an error", "[dispatch]") {
  Fixture f;
  f.lib.def("g(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d) -> Tensor")
      .impl("g", DispatchKey::kCPU,
            [](const Tensor& a, const std::optional<Tensor>&, const std::vector<Tensor>&,
               const std::vector<std::optional<Tensor>>&) { return Fill(a, 1); })
      .impl("g", DispatchKey::kMeta,
            [](const Tensor& a, const std::optional<Tensor>&, const std::vector<Tensor>&,
               const std::vector<std::optional<Tensor>>&) { return Meta({1}); });
  OperatorHandle op = Dispatcher::Get().FindOpOrThrow("dtest::g");
  using Opt = std::vector<std::optional<Tensor>>;
  // Meta tensors only make a Meta call; a meta tensor among CPU ones is the mixed-device error
  // (never a silent Meta call), inside lists too.
  CHECK(op.CallBoxed({IValue(Meta()), IValue(), IValue(std::vector<Tensor>{Meta()}),
                      IValue(Opt{})})[0]
            .toTensor()
            .device() == Device::meta());
  CHECK_THROWS_WITH(
      op.CallBoxed({IValue(Cpu()), IValue(), IValue(std::vector<Tensor>{Meta()}), IValue(Opt{})}),
      "[dtest::g] expected all tensor arguments on one device, but argument 'a' (#0) is on cpu "
      "and argument 'c' (#2) element 0 on meta");
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu()), IValue(), IValue(std::vector<Tensor>{}),
                                  IValue(Opt{std::nullopt, Meta()})}),
                    "[dtest::g] expected all tensor arguments on one device, but argument 'a' "
                    "(#0) is on cpu and argument 'd' (#3) element 1 on meta");
  CHECK_THROWS_WITH(op.typed<Tensor(const Tensor&, const std::optional<Tensor>&,
                                    const std::vector<Tensor>&,
                                    const std::vector<std::optional<Tensor>>&)>()
                        .call(Cpu(), Meta(), {}, {}),
                    "[dtest::g] expected all tensor arguments on one device, but argument 'a' "
                    "(#0) is on cpu and argument 'b' (#1) on meta");
  CHECK(op.ComputeDispatchKey(
            {IValue(Cpu()), IValue(), IValue(std::vector<Tensor>{}), IValue(Opt{})}, 0) ==
        DispatchKey::kCPU);
}

TEST_CASE("tensors on CPU and CUDA in one call are an error naming both", "[dispatch]") {
  Fixture f;
  f.lib.def("h(Tensor a, Tensor[] b) -> Tensor")
      .impl("h", DispatchKey::kCPU, [](const Tensor& a, const std::vector<Tensor>&) { return a; });
  // A tensor that only claims to live on a GPU: its data is never touched here.
  static float storage[4];
  Tensor gpu = opreg::from_blob(storage, {4}, {1}, DType::kFloat32, Device::cuda(0), [](void*) {});
  OperatorHandle op = Dispatcher::Get().FindOpOrThrow("dtest::h");
  const std::string expected =
      "[dtest::h] expected all tensor arguments on one device, but argument 'a' (#0) is on cpu "
      "and argument 'b' (#1) element 1 on cuda:0";
  CHECK_THROWS_WITH(op.CallBoxed({IValue(Cpu()), IValue(std::vector<Tensor>{Cpu(), gpu})}),
                    expected);
  auto typed = op.typed<Tensor(const Tensor&, const std::vector<Tensor>&)>();
  CHECK_THROWS_WITH(typed.call(Cpu(), {Cpu(), gpu}), expected);
  // All on the (claimed) GPU: the CUDA key, which has no kernel here.
  CHECK_THROWS_WITH(typed.call(gpu, {}), Catch::StartsWith("Could not run 'dtest::h' with "
                                                           "arguments from the 'CUDA' backend."));
}

TEST_CASE("ops without tensor arguments dispatch on their Device argument", "[dispatch]") {
  Fixture f;
  f.lib.def("make(int n, Device device=\"cpu\") -> Tensor")
      .impl("make", DispatchKey::kCPU,
            [](int64_t n, Device d) { return opreg::zeros({n}, DType::kFloat32, d); })
      .impl("make", DispatchKey::kMeta,
            [](int64_t n, Device d) { return opreg::empty({n}, DType::kFloat32, d); });
  auto op = Dispatcher::Get().FindOpOrThrow("dtest::make");
  CHECK(op.typed<Tensor(int64_t, Device)>().call(4, Device::meta()).device() == Device::meta());
  CHECK(op.CallBoxed({IValue(2)})[0].toTensor().device() == Device::cpu());
  CHECK(op.CallBoxed({IValue(2), IValue("meta")})[0].toTensor().device() == Device::meta());
}

TEST_CASE("out variants link by PyTorch's rule or explicitly", "[dispatch][out]") {
  Fixture f;
  f.lib.def("split_add(Tensor x, Tensor y) -> (Tensor, Tensor)");
  f.lib.def(
      "split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0, Tensor(b!) out1) -> "
      "(Tensor(a!), Tensor(b!))");
  auto link = Dispatcher::Get().OutVariantOf(opreg::OperatorName("dtest::split_add", ""));
  REQUIRE(link.has_value());
  CHECK(link->out.str() == "dtest::split_add.out");
  CHECK(link->out_argument_names == std::vector<std::string>{"out0", "out1"});
  CHECK(link->out_argument_indices == std::vector<size_t>{2, 3});
  CHECK_THAT(
      *Dispatcher::Get().DumpOp("dtest::split_add"),
      Catch::Contains("out variant: dtest::split_add.out (outs: out0, out1; linked by name)"));

  // vLLM style: positional Tensor! outs, linked by hand.
  f.lib.def("silu_and_mul(Tensor input) -> Tensor");
  f.lib.def("silu_and_mul_out(Tensor! result, Tensor input) -> ()");
  CHECK_FALSE(Dispatcher::Get().OutVariantOf(opreg::OperatorName("dtest::silu_and_mul", "")));
  f.lib.link_out_variant("silu_and_mul", "silu_and_mul_out", {"result"});
  auto explicit_link =
      Dispatcher::Get().OutVariantOf(opreg::OperatorName("dtest::silu_and_mul", ""));
  REQUIRE(explicit_link.has_value());
  CHECK(explicit_link->explicit_link);
  CHECK(explicit_link->out_argument_indices == std::vector<size_t>{0});
  CHECK_THROWS_WITH(f.lib.link_out_variant("silu_and_mul", "nope", {"result"}),
                    Catch::StartsWith("link_out_variant(dtest::silu_and_mul, dtest::nope): "
                                      "dtest::nope is not defined"));
  f.lib.def("bad_out(Tensor result, Tensor input) -> ()");
  f.lib.def("other(Tensor input) -> Tensor");
  CHECK_THROWS_WITH(f.lib.link_out_variant("other", "bad_out", {"result"}),
                    Catch::Contains("out argument 'result'"));
}

TEST_CASE("synthesize_functional defines the functional op of an out variant", "[dispatch][out]") {
  Fixture f;
  f.lib.def("rms.out(Tensor x, float eps, *, Tensor(a!) out) -> Tensor(a!)");
  f.lib.synthesize_functional("rms.out",
                              [](const Tensor& x, double eps) { return opreg::empty_like(x); });
  OperatorHandle op = Dispatcher::Get().FindOpOrThrow("dtest::rms");
  CHECK(op.schema().str() == "dtest::rms(Tensor x, float eps) -> Tensor");
  auto link = Dispatcher::Get().OutVariantOf(op.operator_name());
  REQUIRE(link.has_value());
  CHECK(link->out.str() == "dtest::rms.out");
  Tensor y = op.typed<Tensor(const Tensor&, double)>().call(Meta({4, 8}), 1e-6);
  CHECK(y.sizes() == opreg::IntArrayRef{4, 8});
}

TEST_CASE("symmetric-memory arguments are validated and kept apart", "[dispatch][symm]") {
  Fixture f;
  f.lib.def("all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor");
  f.lib.register_symm_mem_args("all_reduce", {"input"});
  auto required = Dispatcher::Get().SymmMemArgsOf(opreg::OperatorName("dtest::all_reduce", ""),
                                                  opreg::SymmMemRequirement::kRequired);
  REQUIRE(required.has_value());
  CHECK(required->indices == std::vector<size_t>{0});
  CHECK_THROWS_WITH(
      f.lib.register_symm_mem_args("all_reduce", {}),
      Catch::StartsWith("Cannot register empty arg_names list for dtest::all_reduce"));
  CHECK_THROWS_WITH(f.lib.register_symm_mem_args("all_reduce", {"nope"}),
                    Catch::StartsWith("Invalid argument names for dtest::all_reduce: ['nope']"));
  CHECK_THROWS_WITH(
      f.lib.register_symm_mem_args("all_reduce", {"input"}, opreg::SymmMemRequirement::kAccepted),
      Catch::StartsWith("[dtest::all_reduce] symmetric-memory argument 'input' is "
                        "already registered as required"));
  CHECK_THAT(*Dispatcher::Get().DumpOp("dtest::all_reduce"),
             Catch::Contains("symmetric-memory arguments (required): input"));
}

TEST_CASE("lookups of unknown ops say what exists", "[dispatch]") {
  Fixture f;
  f.lib.def("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  CHECK_THROWS_WITH(Dispatcher::Get().FindOpOrThrow("dtest::f"),
                    "Could not find operator dtest::f (defined overloads: dtest::f.out)");
  CHECK_FALSE(Dispatcher::Get().FindOp("dtest::nothing").has_value());
  auto ops = Dispatcher::Get().ListOps();
  CHECK(std::find(ops.begin(), ops.end(), opreg::OperatorName("dtest::f", "out")) != ops.end());
}

}  // namespace

TEST_CASE("Every device type has its runtime key; an unknown one is an error", "[dispatch]") {
  CHECK(opreg::DispatchKeyFor(opreg::DeviceType::kCPU) == DispatchKey::kCPU);
  CHECK(opreg::DispatchKeyFor(opreg::DeviceType::kCUDA) == DispatchKey::kCUDA);
  CHECK(opreg::DispatchKeyFor(opreg::DeviceType::kMeta) == DispatchKey::kMeta);
  for (int k = 0; k < opreg::kNumDispatchKeys; ++k) {
    const auto key = static_cast<DispatchKey>(k);
    CHECK(opreg::ParseDispatchKey(opreg::DispatchKeyName(key)) == key);
  }
  try {
    opreg::DispatchKeyFor(static_cast<opreg::DeviceType>(7));
    FAIL("an unknown device type was served");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kValue);
    CHECK_THAT(e.what(), Catch::Contains("unknown device type 7"));
  }
}
