// Eager functional -> out resolution: a functional op linked to an out variant, with no kernel
// of its own for a key, runs its meta function, gets one fresh buffer per output and calls the
// out kernel with them.
#include <catch2/catch.hpp>

#include "opreg/core/allocator.h"
#include "opreg/core/error.h"
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

Tensor Arange(int64_t n) { return opreg::arange(n, DType::kFloat32); }

// scale.out: out = x * alpha
Tensor& ScaleOut(const Tensor& x, double alpha, Tensor& out) {
  for (int64_t i = 0; i < x.numel(); ++i) out.set({i}, x.at({i}) * alpha);
  return out;
}
Tensor ScaleMeta(const Tensor& x, double alpha) { return opreg::empty_like(x); }

// split_add.out: (x + y, x - y)
std::tuple<Tensor, Tensor> SplitAddOut(const Tensor& x, const Tensor& y, Tensor& s, Tensor& d) {
  for (int64_t i = 0; i < x.numel(); ++i) {
    s.set({i}, x.at({i}) + y.at({i}));
    d.set({i}, x.at({i}) - y.at({i}));
  }
  return {s, d};
}
std::tuple<Tensor, Tensor> SplitAddMeta(const Tensor& x, const Tensor& y) {
  return {opreg::empty_like(x), opreg::empty_like(x)};
}

struct Ops {
  Library lib{Library::FRAGMENT, "res", std::nullopt, "res.cc", 1};
  Ops() {
    lib.def("scale(Tensor x, float alpha=2.) -> Tensor");
    lib.def("scale.out(Tensor x, float alpha=2., *, Tensor(a!) out) -> Tensor(a!)");
    lib.impl("scale.out", DispatchKey::kCPU, &ScaleOut);
    lib.impl("scale", DispatchKey::kMeta, &ScaleMeta);
    lib.def("split_add(Tensor x, Tensor y) -> (Tensor, Tensor)");
    lib.def(
        "split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0, Tensor(b!) out1) -> "
        "(Tensor(a!), Tensor(b!))");
    lib.impl("split_add.out", DispatchKey::kCPU, &SplitAddOut);
    lib.impl("split_add", DispatchKey::kMeta, &SplitAddMeta);
  }
};

TEST_CASE("a functional call runs its out kernel on a fresh buffer", "[out]") {
  Ops ops;
  auto op = Dispatcher::Get().FindOpOrThrow("res::scale");
  const Tensor x = Arange(5);
  const auto before = opreg::GetCpuAllocatorStats();
  Tensor y = op.typed<Tensor(const Tensor&, double)>().call(x, 3.0);
  // One allocation: the output (the meta function allocates nothing).
  CHECK(opreg::GetCpuAllocatorStats().allocations - before.allocations == 1);
  CHECK(y.at({4}) == 12.0);
  CHECK_FALSE(y.is_alias_of(x));
  CHECK(x.at({4}) == 4.0);  // the input is untouched
  // Boxed, with the default.
  Stack out = op.CallBoxed({IValue(x)});
  CHECK(out[0].toTensor().at({2}) == 4.0);
  CHECK_THAT(*Dispatcher::Get().DumpOp("res::scale"),
             Catch::Contains("CPU: through out variant res::scale.out (meta function, then out "
                             "kernel)"));
  // Meta calls run the meta function itself.
  Tensor m = op.typed<Tensor(const Tensor&, double)>().call(
      opreg::empty({7}, DType::kFloat32, Device::meta()), 1.0);
  CHECK(m.device() == Device::meta());
}

TEST_CASE("multi-output ops get one buffer per output", "[out]") {
  Ops ops;
  auto op = Dispatcher::Get().FindOpOrThrow("res::split_add");
  const Tensor x = Arange(4), y = opreg::full({4}, 1.0, DType::kFloat32);
  const auto before = opreg::GetCpuAllocatorStats();
  auto [s, d] = op.typed<std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&)>().call(x, y);
  CHECK(opreg::GetCpuAllocatorStats().allocations - before.allocations == 2);
  CHECK_FALSE(s.is_alias_of(d));
  CHECK(s.at({3}) == 4.0);
  CHECK(d.at({3}) == 2.0);
}

TEST_CASE("explicit vLLM-style links resolve too", "[out]") {
  Library lib(Library::FRAGMENT, "res_vllm", std::nullopt, "v.cc", 1);
  lib.def("silu_and_mul(Tensor input) -> Tensor");
  lib.def("silu_and_mul_out(Tensor! result, Tensor input) -> ()");
  lib.impl("silu_and_mul_out", DispatchKey::kCPU, [](Tensor& result, const Tensor& input) {
    const int64_t d = input.size(-1) / 2;
    for (int64_t i = 0; i < d; ++i) {
      const double a = input.at({i}), b = input.at({i + d});
      result.set({i}, a / (1 + std::exp(-a)) * b);
    }
  });
  lib.impl("silu_and_mul", DispatchKey::kMeta, [](const Tensor& input) {
    return opreg::empty({input.size(-1) / 2}, input.dtype(), input.device());
  });
  lib.link_out_variant("silu_and_mul", "silu_and_mul_out", {"result"});
  Tensor x = opreg::full({4}, 1.0, DType::kFloat32);
  Tensor y = Dispatcher::Get()
                 .FindOpOrThrow("res_vllm::silu_and_mul")
                 .typed<Tensor(const Tensor&)>()
                 .call(x);
  REQUIRE(y.numel() == 2);
  CHECK(y.at({1}) == Approx(1.0 / (1 + std::exp(-1.0))));
}

TEST_CASE("def_functional: functional forms of vLLM out ops from declarative shapes", "[out]") {
  Library lib(Library::FRAGMENT, "res_decl", std::nullopt, "d.cc", 1);
  lib.def("silu_and_mul_out(Tensor! out, Tensor input) -> ()");
  lib.impl("silu_and_mul_out", DispatchKey::kCPU, [](Tensor& out, const Tensor& input) {
    const int64_t d = input.size(-1) / 2;
    for (int64_t i = 0; i < d; ++i) out.set({i}, input.at({i}) * input.at({i + d}));
  });
  lib.def("quant_out(Tensor! q, Tensor! scale, Tensor input) -> ()");
  lib.impl("quant_out", DispatchKey::kCPU, [](Tensor& q, Tensor& scale, const Tensor& input) {
    for (int64_t r = 0; r < input.size(0); ++r) {
      scale.set({r, 0}, 0.5);
      for (int64_t c = 0; c < input.size(1); ++c) q.set({r, c}, input.at({r, c}) * 2);
    }
  });
  lib.def("fill_out(Tensor! out, int rows, int[] cols, float value) -> ()");
  lib.impl("fill_out", DispatchKey::kCPU,
           [](Tensor& out, int64_t, const std::vector<int64_t>&, double value) {
             for (int64_t i = 0; i < out.numel(); ++i)
               out.data_ptr<float>()[i] = static_cast<float>(value);
           });

  // Three lines each: no Meta function written by hand.
  lib.def_functional("silu_and_mul(Tensor input) -> Tensor", "silu_and_mul_out", {"out"},
                     {opreg::OutputSpec::Like("input").LastDimDividedBy(2)});
  lib.def_functional("quant(Tensor input) -> (Tensor, Tensor)", "quant_out", {"q", "scale"},
                     {opreg::OutputSpec::Like("input").WithDType(DType::kInt8),
                      opreg::OutputSpec::PerRow("input")});
  lib.def_functional("fill(int rows, int[] cols, float value) -> Tensor", "fill_out", {"out"},
                     {opreg::OutputSpec::FromInts({"rows", "cols"}, DType::kFloat32)});

  auto& d = Dispatcher::Get();
  Tensor y =
      d.FindOpOrThrow("res_decl::silu_and_mul").typed<Tensor(const Tensor&)>().call(Arange(4));
  REQUIRE(y.sizes() == opreg::IntArrayRef{2});
  CHECK(y.at({1}) == 3.0);  // 1 * 3
  // The Meta kernel keeps its specs, for bindings that compute the shapes symbolically.
  const opreg::KernelFunction* meta =
      d.FindOpOrThrow("res_decl::silu_and_mul").entry().kernel(DispatchKey::kMeta);
  REQUIRE(meta != nullptr);
  REQUIRE(meta->output_specs() != nullptr);
  REQUIRE(meta->output_specs()->size() == 1);
  const opreg::OutputSpec& spec = meta->output_specs()->front();
  CHECK(spec.kind_name() == "like");
  CHECK(spec.argument_names() == std::vector<std::string>{"input"});
  CHECK(spec.divide_last() == 2);
  CHECK(spec.multiply_last() == 1);
  CHECK(!spec.dtype().has_value());
  CHECK(!spec.last_from().has_value());
  CHECK(d.FindOpOrThrow("res_decl::silu_and_mul_out").entry().kernel(DispatchKey::kMeta) ==
        nullptr);
  Stack q = d.FindOpOrThrow("res_decl::quant")
                .CallBoxed({IValue(opreg::full({2, 3}, 2.0, DType::kFloat32))});
  REQUIRE(q.size() == 2);
  CHECK(q[0].toTensor().dtype() == DType::kInt8);
  CHECK(q[0].toTensor().sizes() == opreg::IntArrayRef{2, 3});
  CHECK(q[0].toTensor().at({1, 2}) == 4.0);
  CHECK(q[1].toTensor().sizes() == opreg::IntArrayRef{2, 1});
  CHECK(q[1].toTensor().dtype() == DType::kFloat32);
  Stack f = d.FindOpOrThrow("res_decl::fill")
                .CallBoxed({IValue(2), IValue(std::vector<int64_t>{3, 4}), IValue(1.5)});
  CHECK(f[0].toTensor().sizes() == opreg::IntArrayRef{2, 3, 4});
  CHECK(f[0].toTensor().at({1, 2, 3}) == 1.5);

  // A functional argument only the output shapes use: vLLM's topk_softmax reads k from its
  // outputs, so its out op has no k.
  lib.def("topk_out(Tensor! values, Tensor! indices, Tensor gating, bool renormalize) -> ()");
  lib.impl("topk_out", DispatchKey::kCPU,
           [](Tensor& values, Tensor& indices, const Tensor& gating, bool renormalize) {
             const int64_t k = values.size(-1);
             for (int64_t r = 0; r < gating.size(0); ++r) {
               for (int64_t j = 0; j < k; ++j) {
                 values.set({r, j}, gating.at({r, j}) * (renormalize ? 10 : 1));
                 indices.set({r, j}, static_cast<double>(j));
               }
             }
           });
  lib.def_functional("topk(Tensor gating, int k, bool renormalize) -> (Tensor, Tensor)", "topk_out",
                     {"values", "indices"},
                     {opreg::OutputSpec::Like("gating").LastDimFrom("k"),
                      opreg::OutputSpec::Like("gating").LastDimFrom("k").WithDType(DType::kInt32)});
  Stack t =
      d.FindOpOrThrow("res_decl::topk")
          .CallBoxed({IValue(opreg::full({3, 5}, 0.5, DType::kFloat32)), IValue(2), IValue(true)});
  CHECK(t[0].toTensor().sizes() == opreg::IntArrayRef{3, 2});
  CHECK(t[0].toTensor().at({2, 1}) == 5.0);
  CHECK(t[1].toTensor().dtype() == DType::kInt32);
  CHECK(t[1].toTensor().at({2, 1}) == 1.0);
  // An out-op input the functional lacks is refused, naming it.
  lib.def("h_out(Tensor! out, Tensor x, int n) -> ()");
  CHECK_THROWS_WITH(
      lib.def_functional("h(Tensor x) -> Tensor", "h_out", {"out"}, {opreg::OutputSpec::Like("x")}),
      Catch::Contains("argument 'n' (#2) is not an argument of res_decl::h"));

  // Sizes the spec cannot produce name the op, the output and the argument.
  CHECK_THROWS_WITH(
      d.FindOpOrThrow("res_decl::silu_and_mul").CallBoxed({IValue(Arange(3))}),
      "[res_decl::silu_and_mul] output #0: the last dimension of argument 'input' (3) must be "
      "divisible by 2");
  // Bad specs are refused when the op is defined, and define nothing.
  lib.def("g_out(Tensor! out, Tensor x, int n) -> ()");
  CHECK_THROWS_WITH(lib.def_functional("g(Tensor x, int n) -> Tensor", "g_out", {"out"},
                                       {opreg::OutputSpec::Like("y")}),
                    Catch::StartsWith("[res_decl::g] output spec: no argument 'y'"));
  CHECK_THROWS_WITH(
      lib.def_functional("g(Tensor x, int n) -> Tensor", "g_out", {"out"},
                         {opreg::OutputSpec::Like("n")}),
      Catch::StartsWith("[res_decl::g] output spec: argument 'n' gives a shape, so it must be a "
                        "Tensor; it is int"));
  CHECK_THROWS_WITH(
      lib.def_functional("g(Tensor x, int n) -> Tensor", "g_out", {"out"}, {}),
      Catch::StartsWith("[res_decl::g] def_functional: 0 output specs for 1 returns"));
  CHECK_FALSE(d.FindOp("res_decl::g").has_value());
}

TEST_CASE("an out kernel that returns another tensor is an error naming the output", "[out]") {
  Library lib(Library::FRAGMENT, "res_bad", std::nullopt, "b.cc", 1);
  lib.def("f(Tensor x) -> Tensor");
  lib.def("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  lib.impl("f.out", DispatchKey::kCPU,
           [](const Tensor& x, Tensor& out) -> Tensor { return opreg::empty_like(out); });
  lib.impl("f", DispatchKey::kMeta, [](const Tensor& x) { return opreg::empty_like(x); });
  auto op = Dispatcher::Get().FindOpOrThrow("res_bad::f").typed<Tensor(const Tensor&)>();
  CHECK_THROWS_WITH(op.call(Arange(3)),
                    Catch::StartsWith("[res_bad::f] output #0: the kernel returned a "
                                      "tensor other than the buffer it was given, or resized it"));
  CHECK_THROWS_WITH(op.call(Arange(3)),
                    Catch::EndsWith("(in res_bad::f.out, the out variant that computes "
                                    "res_bad::f)"));
}

TEST_CASE("errors of the out kernel speak of the functional call", "[out]") {
  // vLLM's order: the output first, so every input sits one place later in the out op.
  Library lib(Library::FRAGMENT, "res_msg", std::nullopt, "m.cc", 1);
  lib.def("g(Tensor input, Tensor weight) -> Tensor");
  lib.def("g_out(Tensor! result, Tensor input, Tensor weight) -> ()");
  lib.impl("g_out", DispatchKey::kCPU, [](const OperatorHandle& op, Stack* s) {
    const Tensor& weight = (*s)[2].toTensor();
    OPREG_CHECK_TYPE(
        weight.dtype() == DType::kFloat32,
        opreg::ArgErrorMessage(op.operator_name().str(), "weight", 2, "dtype f32", "another"));
    OPREG_CHECK_TYPE((*s)[0].toTensor().dim() == 2,
                     opreg::ArgErrorMessage(op.operator_name().str(), "result", 0, "2-d", "1-d"));
    s->clear();
  });
  lib.impl("g", DispatchKey::kMeta,
           [](const Tensor& input, const Tensor&) { return opreg::empty_like(input); });
  lib.link_out_variant("g", "g_out", {"result"});
  auto op =
      Dispatcher::Get().FindOpOrThrow("res_msg::g").typed<Tensor(const Tensor&, const Tensor&)>();
  CHECK_THROWS_WITH(op.call(Arange(3), opreg::zeros({3}, DType::kInt32)),
                    "[res_msg::g] argument 'weight' (#1): expected dtype f32, got another (in "
                    "res_msg::g_out, the out variant that computes res_msg::g)");
  CHECK_THROWS_WITH(op.call(Arange(3), Arange(3)),
                    "[res_msg::g] output #0: expected 2-d, got 1-d (in res_msg::g_out, the out "
                    "variant that computes res_msg::g)");
}

TEST_CASE("a linked functional op without a meta function says so", "[out]") {
  Library lib(Library::FRAGMENT, "res_nometa", std::nullopt, "n.cc", 1);
  lib.def("f(Tensor x) -> Tensor");
  lib.def("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  lib.impl("f.out", DispatchKey::kCPU, [](const Tensor& x, Tensor& out) -> Tensor& { return out; });
  auto op = Dispatcher::Get().FindOpOrThrow("res_nometa::f").typed<Tensor(const Tensor&)>();
  CHECK_THROWS_WITH(op.call(Arange(3)),
                    Catch::StartsWith("[res_nometa::f] has no meta function: register a Meta "
                                      "kernel for it"));
}

TEST_CASE("ops with data-dependent output sizes are not resolved to out variants", "[out]") {
  Library lib(Library::FRAGMENT, "res_dyn", std::nullopt, "d.cc", 1);
  lib.def("nonzero(Tensor x) -> Tensor", {"dynamic_output_shape"});
  lib.def("nonzero.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  lib.impl("nonzero.out", DispatchKey::kCPU,
           [](const Tensor& x, Tensor& out) -> Tensor& { return out; });
  auto op = Dispatcher::Get().FindOpOrThrow("res_dyn::nonzero").typed<Tensor(const Tensor&)>();
  CHECK_THROWS_WITH(op.call(Arange(3)),
                    Catch::StartsWith("Could not run 'res_dyn::nonzero' with arguments from the "
                                      "'CPU' backend."));
  REQUIRE(Dispatcher::Get().OutVariantOf(opreg::OperatorName("res_dyn::nonzero", "")));
}

TEST_CASE("out ops called typed return references to the caller's out tensors", "[out]") {
  Ops ops;
  auto typed = Dispatcher::Get()
                   .FindOpOrThrow("res::scale.out")
                   .typed<Tensor&(const Tensor&, double, Tensor&)>();
  Tensor out = opreg::zeros({3}, DType::kFloat32);
  Tensor& r = typed.call(Arange(3), 2.0, out);
  CHECK(&r == &out);
  CHECK(out.at({2}) == 4.0);
  // Through a boxed kernel the reference still refers to the caller's tensor.
  Library boxed(Library::FRAGMENT, "res_boxed", std::nullopt, "rb.cc", 1);
  boxed.def("fill.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  boxed.impl("fill.out", DispatchKey::kCPU, [](const OperatorHandle&, Stack* s) {
    Tensor out = s->back().toTensor();
    out.set({0}, 7.0);
    s->clear();
    s->push_back(IValue(out));
  });
  auto fill = Dispatcher::Get()
                  .FindOpOrThrow("res_boxed::fill.out")
                  .typed<Tensor&(const Tensor&, Tensor&)>();
  Tensor& f = fill.call(Arange(1), out);
  CHECK(&f == &out);
  CHECK(out.at({0}) == 7.0);
}

TEST_CASE("a direct kernel for the key wins over resolution", "[out]") {
  Ops ops;
  Library cpu(Library::IMPL, "res", DispatchKey::kCPU, "c.cc", 1);
  cpu.impl("scale",
           [](const Tensor& x, double alpha) { return opreg::full({1}, -1.0, DType::kFloat32); });
  auto op = Dispatcher::Get().FindOpOrThrow("res::scale").typed<Tensor(const Tensor&, double)>();
  CHECK(op.call(Arange(3), 2.0).at({0}) == -1.0);
}

}  // namespace
