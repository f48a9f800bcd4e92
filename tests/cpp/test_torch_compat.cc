// opreg::torch_compat: libtorch's kernel-facing API over opreg. Registration through
// TORCH_LIBRARY blocks (and what happens to the calls opreg cannot map), at::Tensor's metadata,
// views and compute methods, the factories, TORCH_CHECK's kinds and messages, AT_DISPATCH,
// at::parallel_for and the small value types.
#include <ATen/Dispatch.h>
#include <ATen/Operators.h>  // included by the official tutorial (pytorch/extension-cpp)
#include <ATen/Parallel.h>
#include <torch/all.h>
#include <torch/library.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "opreg/dispatch/dispatcher.h"

namespace {

using opreg::Dispatcher;
using opreg::ErrorKind;
using opreg::IValue;

// Runs `fn`, which must throw opreg::Error of `kind` with a message containing `text`.
template <class Fn>
void RequireError(Fn&& fn, ErrorKind kind, const std::string& text) {
  try {
    fn();
  } catch (const opreg::Error& e) {
    INFO(e.message());
    CHECK(e.kind() == kind);
    CHECK(e.message().find(text) != std::string::npos);
    return;
  }
  FAIL("no opreg::Error thrown; expected one containing: " << text);
}

// ---- Kernels with libtorch signatures ----

void scale_(torch::Tensor& out, const torch::Tensor& x, double factor) {
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "scale_", [&] {
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      o[i] = static_cast<scalar_t>(static_cast<float>(in[i]) * static_cast<float>(factor));
    }
  });
}

torch::Tensor add_maybe(const torch::Tensor& x, const std::optional<torch::Tensor>& bias,
                        at::IntArrayRef shape, at::ScalarType dtype) {
  torch::Tensor out = x.to(dtype).clone();
  if (bias.has_value()) out.copy_(out.add(bias->item<double>()));
  return out.reshape(shape);
}

std::tuple<torch::Tensor, torch::Tensor> split_half(torch::Tensor x,
                                                    std::optional<std::tuple<int64_t, int64_t>> g) {
  const int64_t d = x.size(-1) / 2;
  int64_t extra = g ? std::get<0>(*g) + std::get<1>(*g) : 0;
  return {x.slice(-1, 0, d).add(static_cast<double>(extra)), x.slice(-1, d)};
}

int64_t count_args(int64_t a, int64_t b) { return a + b; }

// int[][] (vLLM's register_graph_buffers takes one): the sum of every inner list's last value.
int64_t sum_last(const std::vector<std::vector<int64_t>>& offsets) {
  int64_t total = 0;
  for (const auto& o : offsets) total += o.empty() ? 0 : o.back();
  return total;
}

TORCH_LIBRARY(compat_test, m) {
  m.def("scale_(Tensor! out, Tensor x, float factor) -> ()");
  m.impl("scale_", torch::kCPU, &scale_);
  m.def("add_maybe(Tensor x, Tensor? bias, int[] shape, ScalarType dtype) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.impl("add_maybe", torch::kCPU, TORCH_FN(add_maybe));
  m.def("bad(Tensor x -> Tensor");  // kBadSchemaLine: recorded, the block goes on
  m.def("split_half(Tensor x, (int, int)? g=None) -> (Tensor, Tensor)");
  m.impl("split_half", torch::dispatch(c10::DispatchKey::CPU, &split_half));
  m.impl("split_half", c10::DispatchKey::Autograd, &split_half);  // kUnsupportedKeyLine
  m.def("count_args", &count_args);  // schema inferred from the C++ signature
  m.def("sum_last", &sum_last);
}
constexpr int kBadSchemaLine = __LINE__ - 7;
constexpr int kUnsupportedKeyLine = __LINE__ - 5;

TORCH_LIBRARY_FRAGMENT(compat_test, m) { m.def("frag(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(compat_test, CompositeExplicitAutograd, m) {
  m.impl("frag", [](const at::Tensor& x) { return x.mul(2); });
}

at::Tensor Arange(int64_t n, at::ScalarType dtype = at::kFloat) {
  return torch::arange(n, torch::TensorOptions().dtype(dtype));
}

TEST_CASE("TORCH_LIBRARY blocks register through opreg; each failure is kept apart",
          "[torch_compat][library]") {
  const std::string file = __FILE__;
  int bad_schema = 0, unsupported_key = 0;
  for (const std::string& e : opreg::StaticRegistrationErrors()) {
    if (e.find(file) == std::string::npos) continue;
    if (e.find("bad(Tensor x -> Tensor") != std::string::npos) {
      ++bad_schema;
      CHECK(e.find(file + ":" + std::to_string(kBadSchemaLine)) != std::string::npos);
      CHECK(e.find("while processing TORCH_LIBRARY block at") != std::string::npos);
    }
    if (e.find("dispatch key Autograd has no opreg counterpart") != std::string::npos) {
      ++unsupported_key;
      CHECK(e.find("impl(\"split_half\")") != std::string::npos);
      CHECK(e.find(file + ":" + std::to_string(kUnsupportedKeyLine)) != std::string::npos);
    }
  }
  CHECK(bad_schema == 1);
  CHECK(unsupported_key == 1);

  // Everything after the failures registered.
  auto count = Dispatcher::Get().FindOpOrThrow("compat_test::count_args");
  CHECK(count.schema().str() == "compat_test::count_args(int _0, int _1) -> int _0");
  CHECK(count.CallBoxed({IValue(int64_t{2}), IValue(int64_t{3})})[0].toInt() == 5);
  auto add = Dispatcher::Get().FindOpOrThrow("compat_test::add_maybe");
  CHECK(add.definition().tags == std::vector<std::string>{"pt2_compliant_tag"});
  auto sum_last_op = Dispatcher::Get().FindOpOrThrow("compat_test::sum_last");
  CHECK(sum_last_op.schema().str() == "compat_test::sum_last(int[][] _0) -> int _0");
  opreg::Stack r = sum_last_op.CallBoxed(
      {IValue::GenericList({IValue(std::vector<int64_t>{1, 2}), IValue(std::vector<int64_t>{}),
                            IValue(std::vector<int64_t>{5})})});
  CHECK(r[0].toInt() == 7);
}

TEST_CASE("libtorch kernel signatures bind to boxed calls", "[torch_compat][library]") {
  at::Tensor x = Arange(4, at::kHalf);
  at::Tensor out = torch::empty_like(x);
  Dispatcher::Get()
      .FindOpOrThrow("compat_test::scale_")
      .CallBoxed({IValue(out.opreg()), IValue(x.opreg()), IValue(2.5)});
  CHECK(out.to(at::kFloat).allclose(Arange(4).mul(2.5)));

  auto add = Dispatcher::Get().FindOpOrThrow("compat_test::add_maybe");
  const int64_t float64 = static_cast<int64_t>(at::kDouble);
  opreg::Stack r = add.CallBoxed({IValue(Arange(6).opreg()), IValue(Arange(1).add(3).opreg()),
                                  IValue(std::vector<int64_t>{2, 3}), IValue(float64)});
  at::Tensor y = r[0].toTensor();
  CHECK(y.scalar_type() == at::kDouble);
  CHECK(y.sizes() == std::vector<int64_t>{2, 3});
  CHECK(y.sum().item<double>() == 15.0 + 6 * 3);
  r = add.CallBoxed(
      {IValue(Arange(2).opreg()), IValue(), IValue(std::vector<int64_t>{2}), IValue(float64)});
  CHECK(at::Tensor(r[0].toTensor()).sum().item<double>() == 1.0);

  auto split = Dispatcher::Get().FindOpOrThrow("compat_test::split_half");
  r = split.CallBoxed({IValue(Arange(6).view({1, 6}).opreg()),
                       IValue::Tuple({IValue(int64_t{1}), IValue(int64_t{2})})});
  REQUIRE(r.size() == 2);
  CHECK(at::Tensor(r[0].toTensor()).sum().item<double>() == (0 + 1 + 2) + 3 * 3);
  CHECK(at::Tensor(r[1].toTensor()).sum().item<double>() == 3 + 4 + 5);

  auto frag = Dispatcher::Get().FindOpOrThrow("compat_test::frag");
  r = frag.CallBoxed({IValue(Arange(3).opreg())});
  CHECK(at::Tensor(r[0].toTensor()).sum().item<double>() == 6.0);
}

TEST_CASE("at::Tensor metadata and typed data pointers", "[torch_compat][tensor]") {
  at::Tensor t = torch::zeros({2, 3, 4}, torch::dtype(torch::kBFloat16));
  CHECK(t.dim() == 3);
  CHECK(t.size(-1) == 4);
  CHECK(t.stride(0) == 12);
  CHECK(t.sizes() == std::vector<int64_t>{2, 3, 4});
  CHECK(t.numel() == 24);
  CHECK(t.element_size() == 2);
  CHECK(t.scalar_type() == at::ScalarType::BFloat16);
  CHECK(t.dtype() == at::kBFloat16);
  CHECK(t.dtype().itemsize() == 2);
  CHECK(t.device() == c10::Device(c10::kCPU));
  CHECK(t.is_cpu());
  CHECK_FALSE(t.is_cuda());
  CHECK(t.is_contiguous());
  CHECK(t.options().dtype() == at::kBFloat16);
  CHECK(t.data_ptr<at::BFloat16>() != nullptr);
  CHECK(t.const_data_ptr<c10::BFloat16>() == t.data_ptr());
  RequireError([&] { t.data_ptr<float>(); }, ErrorKind::kType,
               "expected scalar type Float but found BFloat16");
  RequireError([&] { t.size(3); }, ErrorKind::kIndex, "out of range");
  CHECK_FALSE(at::Tensor().defined());
  CHECK(t.storage().nbytes() == 48);
  CHECK(t.storage().data() == t.data_ptr());
  CHECK(t.slice(0, 1).storage().is_alias_of(t.storage()));
  CHECK_FALSE(t.is_pinned());                   // ordinary host memory
  { const at::DeviceGuard guard(t.device()); }  // CPU: nothing to set
  { const c10::OptionalDeviceGuard guard(at::device_of(at::Tensor())); }
  RequireError([] { AT_ERROR("unsupported case ", 3); }, ErrorKind::kRuntime, "unsupported case 3");
}

TEST_CASE("at::Tensor views share storage", "[torch_compat][tensor]") {
  at::Tensor a = Arange(24).view({2, 3, 4});
  at::Tensor s = a.slice(2, 1, std::nullopt, 2);  // columns 1 and 3
  CHECK(s.sizes() == std::vector<int64_t>{2, 3, 2});
  CHECK(s.stride(2) == 2);
  CHECK(s.is_alias_of(a));
  CHECK(s.select(0, 1).select(0, 2).select(0, 1).item<double>() == 23.0);
  CHECK(a.slice(1, -1).sizes() == std::vector<int64_t>{2, 1, 4});
  CHECK(a.transpose(0, 2).sizes() == std::vector<int64_t>{4, 3, 2});
  CHECK_FALSE(a.transpose(0, 2).is_contiguous());
  CHECK(a.permute({2, 0, 1}).stride(0) == 1);
  CHECK(a.flatten(1).sizes() == std::vector<int64_t>{2, 12});
  CHECK(a.narrow(1, 1, 2).size(1) == 2);
  CHECK(a.unsqueeze(0).squeeze(0).sizes() == a.sizes());
  at::Tensor e = Arange(3).view({3, 1}).expand({2, 3, 4});
  CHECK(e.stride(0) == 0);
  CHECK(e.sum().item<double>() == 2 * 4 * 3);
  RequireError([&] { Arange(3).expand({2}); }, ErrorKind::kValue,
               "must match the existing size (3)");
  CHECK(a.view(at::kInt).scalar_type() == at::kInt);
  RequireError([&] { a.view(at::kHalf); }, ErrorKind::kValue, "element size 2 differs");
  CHECK(a.chunk(2, 1).size() == 2);
  CHECK(a.unbind(0)[1].select(0, 0).select(0, 0).item<int64_t>() == 12);
  RequireError([&] { a.slice(0, 0, 1, 0); }, ErrorKind::kValue, "slice step must be positive");
}

TEST_CASE("at::Tensor compute methods, factories and conversions", "[torch_compat][tensor]") {
  at::Tensor x = torch::empty({2, 3}, torch::kFloat32);
  x.fill_(1.5);
  CHECK(x.sum().item<double>() == 9.0);
  x.zero_();
  CHECK(x.abs().amax().item<double>() == 0.0);
  x.copy_(Arange(3));  // broadcast over rows
  CHECK(x.sum().item<double>() == 6.0);
  CHECK(x.to(at::kHalf).scalar_type() == at::kHalf);
  CHECK(x.to(at::kFloat).is_same(x));  // no copy when nothing changes
  CHECK(x.mean().item<double>() == 1.0);
  CHECK(x.neg().amin().item<double>() == -2.0);
  CHECK(x.mul(2).equal(x.add(0).mul(2)));
  CHECK_FALSE(x.equal(x.add(1)));

  // dtype inference follows torch: ints are int64, floats float32.
  CHECK(torch::full({2}, 7).scalar_type() == at::kLong);
  CHECK(torch::full({2}, 7.0).scalar_type() == at::kFloat);
  CHECK(torch::arange(5).scalar_type() == at::kLong);
  CHECK(torch::arange(0, 1, 0.25).numel() == 4);
  CHECK(at::ones_like(x, at::kInt).scalar_type() == at::kInt);
  at::Tensor big = torch::full({3}, int64_t{1} << 60);
  CHECK(big.sum().item<int64_t>() == 3 * (int64_t{1} << 60));  // exact, not through double
  CHECK(torch::full({1}, (int64_t{1} << 60) + 1).item<int64_t>() == (int64_t{1} << 60) + 1);
  CHECK(torch::full({1}, (int64_t{1} << 60) + 1).item().toInt() == (int64_t{1} << 60) + 1);
  CHECK(torch::full({1}, 2.75).item<int>() == 2);
  CHECK(at::cat({Arange(2), Arange(3)}).numel() == 5);
  CHECK(at::stack({Arange(2), Arange(2)}, 1).sizes() == std::vector<int64_t>{2, 2});

  float buffer[6] = {1, 2, 3, 4, 5, 6};
  at::Tensor blob = torch::from_blob(buffer, {2, 3}, torch::kFloat);
  blob.mul_(2);
  CHECK(buffer[5] == 12.0f);
  CHECK(torch::from_blob(buffer, {3}, {2}, torch::kFloat).sum().item<double>() == 2 + 6 + 10);

  RequireError([] { torch::empty({2}, torch::TensorOptions().requires_grad(true)); },
               ErrorKind::kNotImplemented, "requires_grad=True needs autograd");
  RequireError([] { torch::empty({2}, torch::dtype(at::kComplexFloat)); }, ErrorKind::kType,
               "ScalarType ComplexFloat has no opreg dtype");
  RequireError([] { torch::empty({2}, c10::Device(c10::kXPU)); }, ErrorKind::kValue,
               "device 'xpu' has no opreg counterpart");
  RequireError([&] { Arange(3).item<float>(); }, ErrorKind::kRuntime,
               "a Tensor with 3 elements cannot be converted to Scalar");
}

TEST_CASE("Half and BFloat16 arithmetic, limits and the fnuz float8 types",
          "[torch_compat][types]") {
  const at::Half a(1.5f), b(2.25f);
  auto sum = a + b;  // Half, as in libtorch (not float)
  static_assert(std::is_same_v<decltype(sum), at::Half>);
  CHECK(static_cast<float>(sum) == 3.75f);
  static_assert(std::is_same_v<decltype(a * 2.0f), float>);
  static_assert(std::is_same_v<decltype(a * 2.0), double>);
  static_assert(std::is_same_v<decltype(a * 2), at::Half>);
  at::Half acc(0.0f);
  for (int i = 0; i < 4; ++i) acc += a;
  CHECK(static_cast<float>(acc) == 6.0f);
  c10::BFloat16 bf(3.0f);
  bf *= c10::BFloat16(0.5f);
  CHECK(static_cast<float>(-bf) == -1.5f);
  CHECK(at::Half(0x7c00, at::Half::from_bits()) == std::numeric_limits<float>::infinity());

  // Quantization code clamps to numeric_limits<fp8>::max(): it must be 448, not 0.
  CHECK(static_cast<float>(std::numeric_limits<c10::Float8_e4m3fn>::max()) == 448.0f);
  CHECK(static_cast<float>(std::numeric_limits<c10::Float8_e4m3fn>::lowest()) == -448.0f);
  CHECK(static_cast<float>(std::numeric_limits<c10::Float8_e5m2>::max()) == 57344.0f);
  CHECK(static_cast<float>(std::numeric_limits<at::Half>::max()) == 65504.0f);
  CHECK(static_cast<float>(std::numeric_limits<at::Half>::epsilon()) == 0.0009765625f);
  CHECK(static_cast<float>(std::numeric_limits<c10::BFloat16>::max()) > 3.38e38f);
  CHECK_FALSE(std::numeric_limits<c10::Float8_e4m3fn>::has_infinity);
  CHECK(std::isnan(static_cast<float>(std::numeric_limits<at::Half>::quiet_NaN())));

  // e4m3fnuz: bias 8, max 240, NaN 0x80, no negative zero.
  using Fnuz = torch::headeronly::Float8_e4m3fnuz;
  CHECK(static_cast<float>(Fnuz(240.0f)) == 240.0f);
  CHECK(static_cast<float>(Fnuz(1000.0f)) == 240.0f);  // saturates
  CHECK(static_cast<float>(Fnuz(-0.3125f)) == -0.3125f);
  CHECK(Fnuz(-0.0f).x == 0);
  CHECK(Fnuz(std::nanf("")).x == 0x80);
  CHECK(static_cast<float>(Fnuz(std::ldexp(1.0f, -10))) == std::ldexp(1.0f, -10));  // subnormal
  CHECK(static_cast<float>(c10::Float8_e5m2fnuz(57344.0f)) == 57344.0f);
  for (int bits = 0; bits < 256; ++bits) {  // every value round-trips
    if (bits == 0x80) continue;
    const Fnuz v(static_cast<uint8_t>(bits), Fnuz::from_bits());
    REQUIRE(Fnuz(static_cast<float>(v)).x == bits);
  }
  // The unsigned types are opreg dtypes: vLLM's topk_softmax writes uint32 indices.
  torch::Tensor u = torch::zeros({2}, at::kUInt32);
  u.data_ptr<uint32_t>()[1] = 4000000000u;
  CHECK(u.scalar_type() == at::kUInt32);
  CHECK(u.element_size() == 4);
  CHECK(u.to(at::kUInt64).data_ptr<uint64_t>()[1] == 4000000000u);
  RequireError([] { torch::empty({2}, at::kComplexFloat); }, ErrorKind::kType,
               "ScalarType ComplexFloat has no opreg dtype");
}

TEST_CASE("sum over dimensions and sum_out", "[torch_compat][tensor]") {
  at::Tensor a = Arange(24).view({2, 3, 4});
  at::Tensor s = a.sum({0, 2});
  CHECK(s.sizes() == std::vector<int64_t>{3});
  CHECK(s.select(0, 1).item<double>() == (4 + 5 + 6 + 7) + (16 + 17 + 18 + 19));
  CHECK(a.sum(-1, /*keepdim=*/true).sizes() == std::vector<int64_t>{2, 3, 1});
  CHECK(a.transpose(0, 2).sum(2).select(0, 3).select(0, 0).item<double>() == 3 + 15);
  at::Tensor ints = Arange(6, at::kInt).view({2, 3});
  CHECK(ints.sum(1).scalar_type() == at::kLong);
  at::Tensor out = torch::empty({2}, at::kFloat);
  at::sum_out(out, ints, {1});
  CHECK(out.select(0, 1).item<double>() == 12.0);
  RequireError([&] { a.sum({0, -3}); }, ErrorKind::kRuntime, "appears multiple times");
  RequireError([&] { a.sum({3}); }, ErrorKind::kIndex, "Dimension out of range");
}

TEST_CASE("TORCH_CHECK and friends throw opreg::Error of torch's kinds", "[torch_compat][check]") {
  const at::Tensor t = Arange(6).view({2, 3});
  RequireError([&] { TORCH_CHECK(t.dim() == 3, "got ", t.sizes(), " of ", t.scalar_type()); },
               ErrorKind::kRuntime, "got [2, 3] of Float");
  const int x = -1;
  RequireError([&] { TORCH_CHECK(x > 0); }, ErrorKind::kRuntime,
               "Expected x > 0 to be true, but got false.");
  RequireError([&] { TORCH_CHECK_VALUE(false, "bad value"); }, ErrorKind::kValue, "bad value");
  RequireError([&] { TORCH_CHECK_TYPE(false, "bad type"); }, ErrorKind::kType, "bad type");
  RequireError([&] { TORCH_CHECK_INDEX(false, "bad index"); }, ErrorKind::kIndex, "bad index");
  RequireError([&] { TORCH_CHECK_NOT_IMPLEMENTED(false, "later"); }, ErrorKind::kNotImplemented,
               "later");
  RequireError([&] { TORCH_CHECK_EQ(t.dim(), 3); }, ErrorKind::kRuntime,
               "Check failed: t.dim() == 3 (2 vs. 3)");
  RequireError([&] { TORCH_INTERNAL_ASSERT(x == 0, "detail"); }, ErrorKind::kRuntime,
               "INTERNAL ASSERT FAILED");
  TORCH_CHECK(true, "never built");
  // An `if` statement, as libtorch's: libraries write TORCH_CHECK(...) without the `;`.
  TORCH_CHECK(t.dim() == 2, "two dims")
  RequireError([&] { STD_TORCH_CHECK(t.numel() == 5, "numel ", t.numel()); }, ErrorKind::kRuntime,
               "numel 6");
}

TEST_CASE("AT_DISPATCH instantiates only the listed types", "[torch_compat][dispatch]") {
  auto size_of = [](at::ScalarType t) {
    return AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t, "size_of",
                                           [&] { return sizeof(scalar_t); });
  };
  CHECK(size_of(at::kFloat) == 4);
  CHECK(size_of(at::kDouble) == 8);
  CHECK(size_of(at::kBFloat16) == 2);
  RequireError([&] { size_of(at::kInt); }, ErrorKind::kNotImplemented,
               "\"size_of\" not implemented for 'Int'");
  int64_t seen = 0;
  AT_DISPATCH_INTEGRAL_TYPES(Arange(2, at::kLong).dtype(), "sum_ints",
                             [&] { seen = static_cast<int64_t>(sizeof(scalar_t)); });
  CHECK(seen == 8);
  AT_DISPATCH_SWITCH(at::kFloat8_e4m3fn, "fp8", AT_DISPATCH_CASE(at::kFloat8_e4m3fn, [&] {
                       seen = static_cast<float>(scalar_t(500.0f)) == 448.0f ? 1 : 0;
                     }));
  CHECK(seen == 1);  // float8_e4m3fn saturates in opreg's conversion
}

TEST_CASE("at::parallel_for covers the range once and rethrows", "[torch_compat][parallel]") {
  std::vector<std::atomic<int>> hits(1000);
  at::parallel_for(0, 1000, 10, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) hits[i]++;
  });
  for (const auto& h : hits) REQUIRE(h.load() == 1);
  int64_t calls = 0;
  at::parallel_for(0, 5, 100, [&](int64_t begin, int64_t end) { calls += end - begin; });
  CHECK(calls == 5);
  CHECK_THROWS_AS(
      at::parallel_for(
          0, 100, 1, [](int64_t begin, int64_t) { TORCH_CHECK(begin != 0, "first chunk fails"); }),
      opreg::Error);
  const int64_t total = at::parallel_reduce(
      int64_t{0}, int64_t{100}, int64_t{7}, int64_t{0},
      [](int64_t b, int64_t e, int64_t ident) {
        for (int64_t i = b; i < e; ++i) ident += i;
        return ident;
      },
      [](int64_t a, int64_t b) { return a + b; });
  CHECK(total == 4950);
  RequireError([] { at::set_num_threads(0); }, ErrorKind::kValue, "positive number of threads");
}

TEST_CASE("ArrayRef, irange, Device and ScalarType helpers", "[torch_compat][values]") {
  std::vector<int64_t> v = {3, 4, 5};
  at::IntArrayRef ref(v);
  CHECK(ref.vec() == v);
  CHECK(ref.back() == 5);
  CHECK(ref.slice(1).size() == 2);
  RequireError([&] { ref.at(3); }, ErrorKind::kIndex, "invalid index 3 for length 3");
  int64_t sum = 0;
  for (int64_t i : c10::irange(4)) sum += i;
  CHECK(sum == 6);
  for (int i : c10::irange(5, 2)) sum += i;  // empty
  CHECK(sum == 6);
  CHECK(c10::Device("cuda:1").is_cuda());
  CHECK(c10::Device("cuda:1").index() == 1);
  CHECK(c10::Device(c10::kCUDA, 0).str() == "cuda:0");
  CHECK(std::string(c10::toString(at::kFloat8_e4m3fn)) == "Float8_e4m3fn");
  CHECK(c10::elementSize(at::kBFloat16) == 2);
  CHECK(c10::isReducedFloatingType(at::kHalf));
  CHECK_FALSE(c10::isFloatingType(at::kLong));
  CHECK(static_cast<int>(at::kBFloat16) == 15);  // torch's codes
}

}  // namespace
