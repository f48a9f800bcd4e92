// opreg::torch_stable: torch's stable ABI over opreg. examples/torch_stable's unchanged sources
// are compiled into this binary (their STABLE_TORCH_LIBRARY blocks register at start-up); the
// tests call those ops through opreg's dispatcher and compare with plain reference loops, and
// exercise the C shim directly: handles, codes, the boxed stack, aten ops through
// torch_call_dispatcher, lists, strings, from_blob deleters and the error paths.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/Dispatch.h>
#include <torch/headeronly/util/Float8_e4m3fnuz.h>

#include "opreg/core/torch_scalar_types.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "opreg/core/half.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/dispatcher.h"
#include "opreg/dispatch/library.h"

// torch_stable's header-only ScalarType cannot include opreg's headers: it must still agree
// with the one table of torch's codes.
#define OPREG_CHECK_STABLE_CODE_(e, code, name, legacy)                            \
  static_assert(static_cast<int>(torch::headeronly::ScalarType::e) == (code),      \
                "torch_stable's ScalarType::" #e " differs from torch_scalar_types.h");
OPREG_FORALL_TORCH_SCALAR_TYPES(OPREG_CHECK_STABLE_CODE_)
#undef OPREG_CHECK_STABLE_CODE_

namespace {

using opreg::DType;
using opreg::IValue;
using opreg::Stack;

opreg::Tensor Random(std::vector<int64_t> sizes, DType dtype = DType::kFloat32, uint32_t seed = 1) {
  opreg::Tensor t = opreg::empty(sizes, DType::kFloat32);
  float* p = t.data_ptr<float>();
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>((s >> 8) % 2000) / 1000.f - 1.f;
  }
  if (dtype == DType::kFloat32) return t;
  opreg::Tensor out = opreg::empty(sizes, dtype);
  out.copy_(t);
  return out;
}

// A stable handle owning a new reference to `t` (what a kernel receives).
torch::stable::Tensor ToStable(const opreg::Tensor& t) {
  return torch::stable::Tensor(reinterpret_cast<AtenTensorHandle>(new opreg::Tensor(t)));
}

opreg::Tensor FromStable(const torch::stable::Tensor& t) {
  return *reinterpret_cast<opreg::Tensor*>(t.get());
}

float Silu(float x) { return x / (1.f + std::exp(-x)); }

}  // namespace

TEST_CASE("stable-ABI ops are opreg ops with their schemas", "[torch_stable]") {
  auto op = opreg::Dispatcher::Get().FindOp("stable_kernels::silu_and_mul");
  REQUIRE(op.has_value());
  CHECK(op->schema().str() == "stable_kernels::silu_and_mul(Tensor! result, Tensor input) -> ()");
  int count = 0;
  for (const auto& name : opreg::Dispatcher::Get().ListOps()) {
    if (name.str().rfind("stable_kernels::", 0) == 0) ++count;
  }
  CHECK(count == 16);
  CHECK(opreg::StaticRegistrationErrors().empty());
}

TEST_CASE("silu_and_mul through a boxed call, f32 and bf16, on a strided input", "[torch_stable]") {
  auto op = opreg::Dispatcher::Get().FindOpOrThrow("stable_kernels::silu_and_mul");
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    // A column slice of a wider buffer: rows are strided, as a q/k view of a fused qkv.
    opreg::Tensor wide = Random({5, 12}, dtype);
    opreg::Tensor x = wide.narrow(1, 2, 8);
    opreg::Tensor out = opreg::empty({5, 4}, dtype);
    op.CallBoxed({IValue(out), IValue(x)});
    for (int64_t r = 0; r < 5; ++r) {
      for (int64_t j = 0; j < 4; ++j) {
        const float expect =
            static_cast<float>(Silu(static_cast<float>(x.at({r, j}))) * x.at({r, j + 4}));
        CHECK(out.at({r, j}) == Approx(expect).epsilon(dtype == DType::kFloat32 ? 1e-6 : 1e-2));
      }
    }
  }
}

TEST_CASE("rms_norm and a functional op that allocates through torch::stable::new_empty",
          "[torch_stable]") {
  auto& d = opreg::Dispatcher::Get();
  opreg::Tensor x = Random({3, 16}), w = Random({16}, DType::kFloat32, 7);
  opreg::Tensor out = opreg::empty({3, 16}, DType::kFloat32);
  d.FindOpOrThrow("stable_kernels::rms_norm").CallBoxed({IValue(out), IValue(x), IValue(w), 1e-6});
  Stack r = d.FindOpOrThrow("stable_kernels::rms_norm_out_of_place").CallBoxed({x, w, 1e-6});
  REQUIRE(r.size() == 1);
  const opreg::Tensor y = r[0].toTensor();
  REQUIRE(y.sizes() == x.sizes());
  for (int64_t i = 0; i < 3; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < 16; ++j) ss += x.at({i, j}) * x.at({i, j});
    const double inv = 1.0 / std::sqrt(ss / 16 + 1e-6);
    for (int64_t j = 0; j < 16; ++j) {
      CHECK(out.at({i, j}) == Approx(x.at({i, j}) * inv * w.at({j})).epsilon(1e-5));
      CHECK(y.at({i, j}) == out.at({i, j}));
    }
  }
  // The typed path: a C++ signature checked against the schema.
  auto typed = d.FindOpOrThrow("stable_kernels::rms_norm_out_of_place")
                   .typed<opreg::Tensor(const opreg::Tensor&, const opreg::Tensor&, double)>();
  CHECK(typed.call(x, w, 1e-6).at({2, 3}) == y.at({2, 3}));
}

TEST_CASE("topk_softmax, int8 quantization and permute_cols", "[torch_stable]") {
  auto& d = opreg::Dispatcher::Get();
  opreg::Tensor g = Random({4, 8});
  opreg::Tensor w = opreg::empty({4, 2}, DType::kFloat32);
  opreg::Tensor idx = opreg::empty({4, 2}, DType::kInt32);
  opreg::Tensor tok = opreg::empty({4, 2}, DType::kInt32);
  d.FindOpOrThrow("stable_kernels::topk_softmax").CallBoxed({w, idx, tok, g, true});
  for (int64_t r = 0; r < 4; ++r) {
    CHECK(w.at({r, 0}) + w.at({r, 1}) == Approx(1.0));
    CHECK(g.at({r, static_cast<int64_t>(idx.at({r, 0}))}) >=
          g.at({r, static_cast<int64_t>(idx.at({r, 1}))}));
  }
  opreg::Tensor x = Random({2, 5});
  opreg::Tensor q = opreg::empty({2, 5}, DType::kInt8);
  opreg::Tensor scales = opreg::empty({2, 1}, DType::kFloat32);
  d.FindOpOrThrow("stable_kernels::dynamic_scaled_int8_quant").CallBoxed({q, x, scales, IValue()});
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t j = 0; j < 5; ++j) {
      CHECK(std::abs(q.at({r, j}) * scales.at({r, 0}) - x.at({r, j})) <= scales.at({r, 0}));
    }
  }
  opreg::Tensor perm = opreg::empty({5}, DType::kInt32);
  for (int64_t j = 0; j < 5; ++j) perm.set({j}, static_cast<double>(4 - j));
  Stack p = d.FindOpOrThrow("stable_kernels::permute_cols").CallBoxed({x, perm});
  CHECK(p[0].toTensor().at({1, 0}) == x.at({1, 4}));
}

TEST_CASE("a kernel's STD_TORCH_CHECK reaches the caller naming the op", "[torch_stable]") {
  auto op = opreg::Dispatcher::Get().FindOpOrThrow("stable_kernels::silu_and_mul");
  opreg::Tensor x = Random({2, 7});  // odd last dim
  opreg::Tensor out = opreg::empty({2, 3}, DType::kFloat32);
  try {
    op.CallBoxed({IValue(out), IValue(x)});
    FAIL("no error");
  } catch (const opreg::Error& e) {
    INFO(e.message());
    CHECK(std::string(e.message()).find("stable_kernels::silu_and_mul") != std::string::npos);
    CHECK(std::string(e.message()).find("last dim must be even") != std::string::npos);
  }
}

TEST_CASE("torch::stable ops run on opreg tensors through torch_call_dispatcher",
          "[torch_stable]") {
  opreg::Tensor base = Random({2, 3, 4});
  torch::stable::Tensor t = ToStable(base);
  CHECK(t.dim() == 3);
  CHECK(t.size(-1) == 4);
  CHECK(t.scalar_type() == torch::headeronly::ScalarType::Float);
  CHECK(t.is_cpu());
  CHECK(t.element_size() == 4);
  CHECK(t.sizes().equals({2, 3, 4}));

  torch::stable::Tensor tr = torch::stable::transpose(t, 0, 2);
  CHECK(tr.sizes().equals({4, 3, 2}));
  CHECK(tr.stride(0) == 1);
  CHECK(FromStable(tr).is_alias_of(base));
  CHECK(torch::stable::flatten(t, 1).sizes().equals({2, 12}));
  CHECK(torch::stable::view(t, {6, 4}).size(0) == 6);
  CHECK(torch::stable::reshape(tr, {24}).size(0) == 24);
  CHECK(torch::stable::narrow(t, 1, 1, 2).size(1) == 2);
  CHECK(torch::stable::contiguous(tr).is_contiguous());
  CHECK(torch::stable::unsqueeze(t, 0).dim() == 4);
  CHECK(torch::stable::select(t, 0, 1).dim() == 2);
  CHECK(torch::stable::permute(t, {2, 0, 1}).sizes().equals({4, 2, 3}));

  torch::stable::Tensor e = torch::stable::empty({3, 5}, torch::headeronly::ScalarType::BFloat16);
  CHECK(e.scalar_type() == torch::headeronly::ScalarType::BFloat16);
  CHECK(e.is_contiguous());
  torch::stable::Tensor z = torch::stable::new_zeros(t, {7});
  CHECK(FromStable(z).at({6}) == 0.0);
  torch::stable::Tensor f = torch::stable::full({2, 2}, 3.5);
  CHECK(FromStable(f).at({1, 1}) == 3.5);
  torch::stable::fill_(f, -1.0);
  CHECK(FromStable(f).at({0, 1}) == -1.0);
  torch::stable::zero_(f);
  CHECK(FromStable(f).at({0, 0}) == 0.0);

  torch::stable::Tensor s = torch::stable::sum(t, std::vector<int64_t>{2});
  CHECK(FromStable(s).at({1, 2}) ==
        Approx(base.at({1, 2, 0}) + base.at({1, 2, 1}) + base.at({1, 2, 2}) + base.at({1, 2, 3})));
  torch::stable::Tensor half = torch::stable::to(t, torch::headeronly::ScalarType::Half);
  CHECK(half.scalar_type() == torch::headeronly::ScalarType::Half);
  torch::stable::Tensor padded =
      torch::stable::pad(torch::stable::view(t, {6, 4}), {1, 2}, "constant", 9.0);
  CHECK(padded.sizes().equals({6, 7}));
  CHECK(FromStable(padded).at({0, 0}) == 9.0);
  CHECK(FromStable(padded).at({0, 1}) == base.at({0, 0, 0}));
  CHECK(FromStable(padded).at({5, 6}) == 9.0);
  torch::stable::Tensor dst = torch::stable::empty_like(t);
  torch::stable::copy_(dst, t);
  CHECK(FromStable(dst).at({1, 2, 3}) == base.at({1, 2, 3}));
  CHECK_FALSE(torch::stable::is_pinned(t));
}

TEST_CASE("from_blob with a deleter runs it once, when the last reference goes", "[torch_stable]") {
  static int released = 0;
  std::vector<float> data(6, 2.f);
  {
    torch::stable::Tensor t = torch::stable::from_blob(
        data.data(), {2, 3}, {3, 1}, torch::stable::Device(torch::headeronly::DeviceType::CPU),
        torch::headeronly::ScalarType::Float, [](void*) { ++released; });
    torch::stable::Tensor v = torch::stable::transpose(t, 0, 1);
    CHECK(released == 0);
    t = torch::stable::Tensor();
    CHECK(released == 0);
    CHECK(FromStable(v).at({2, 1}) == 2.0);
  }
  CHECK(released == 1);
}

TEST_CASE("the shim reports bad calls as errors with a message, never a crash", "[torch_stable]") {
  int64_t out = 0;
  CHECK(aoti_torch_get_dim(nullptr, &out) == AOTI_TORCH_FAILURE);
  CHECK(std::string(torch_exception_get_what()).find("aoti_torch_get_dim") != std::string::npos);
  AtenTensorHandle h = nullptr;
  const int64_t sizes[] = {2, 3};
  const int64_t strides[] = {3, 1};
  CHECK(aoti_torch_empty_strided(2, sizes, strides, /*complex64*/ 9, 0, -1, &h) ==
        AOTI_TORCH_FAILURE);
  CHECK(std::string(torch_exception_get_what()).find("torch ScalarType code 9") !=
        std::string::npos);
  StableIValue stack[2] = {0, 0};
  CHECK(torch_call_dispatcher("aten::no_such_op", "", stack, TORCH_ABI_VERSION) ==
        AOTI_TORCH_FAILURE);
  CHECK(std::string(torch_exception_get_what()).find("aten::no_such_op") != std::string::npos);
  try {
    torch::stable::Tensor t = ToStable(Random({2, 3}));
    (void)torch::stable::view(t, {4, 4});
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("API call failed") != std::string::npos);
  }
}

TEST_CASE("an opreg op called from stable-ABI code through torch_call_dispatcher",
          "[torch_stable]") {
  opreg::Tensor x = Random({2, 8});
  torch::stable::Tensor out = ToStable(opreg::empty({2, 4}, DType::kFloat32));
  std::array<StableIValue, 2> stack{torch::stable::detail::from(out),
                                    torch::stable::detail::from(ToStable(x))};
  REQUIRE(torch_call_dispatcher("stable_kernels::silu_and_mul", "", stack.data(),
                                TORCH_ABI_VERSION) == AOTI_TORCH_SUCCESS);
  CHECK(FromStable(out).at({1, 2}) ==
        Approx(Silu(static_cast<float>(x.at({1, 2}))) * x.at({1, 6})));
}

TEST_CASE("a STABLE_TORCH_LIBRARY_IMPL with a key opreg lacks is recorded, others stand",
          "[torch_stable]") {
  const size_t before = opreg::StaticRegistrationErrors().size();
  TorchLibraryHandle lib = nullptr;
  REQUIRE(aoti_torch_library_init_impl("stable_kernels", "Autograd", "here.cc", 1, &lib) ==
          AOTI_TORCH_SUCCESS);
  CHECK(aoti_torch_library_impl(lib, "silu_and_mul", nullptr) == AOTI_TORCH_FAILURE);
  aoti_torch_delete_library_object(lib);
  const auto errors = opreg::StaticRegistrationErrors();
  REQUIRE(errors.size() == before + 1);
  CHECK(errors.back().find("no dispatch key 'Autograd'") != std::string::npos);
  CHECK(opreg::Dispatcher::Get().FindOp("stable_kernels::silu_and_mul").has_value());
}

TEST_CASE("element types and THO_DISPATCH", "[torch_stable]") {
  // One implementation of each element type, shared with opreg's tensors.
  static_assert(std::is_same_v<torch::headeronly::Half, opreg::Half>);
  static_assert(std::is_same_v<torch::headeronly::BFloat16, opreg::BFloat16>);
  static_assert(std::is_same_v<c10::Float8_e4m3fn, opreg::Float8E4M3FN>);
  static_assert(
      std::is_same_v<torch::headeronly::impl::ScalarTypeToCPPTypeT<torch::headeronly::kUInt32>,
                     uint32_t>);
  CHECK(static_cast<float>(c10::Float8_e4m3fnuz(240.f)) == 240.f);
  CHECK(static_cast<float>(c10::Float8_e4m3fnuz(1000.f)) == 240.f);  // saturates
  auto size_of = [](torch::headeronly::ScalarType t) {
    return THO_DISPATCH_SWITCH(
        t, "size_of",
        THO_DISPATCH_CASE(torch::headeronly::ScalarType::Half, [&] { return sizeof(scalar_t); })
            THO_DISPATCH_CASE(torch::headeronly::ScalarType::UInt64,
                              [&] { return sizeof(scalar_t); }));
  };
  CHECK(size_of(torch::headeronly::ScalarType::Half) == 2);
  CHECK(size_of(torch::headeronly::ScalarType::UInt64) == 8);
  try {
    size_of(torch::headeronly::ScalarType::Float);
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "\"size_of\" not implemented for 'Float'");
  }
}

TEST_CASE("element types are trivially default-constructible, as c10's", "[torch_stable]") {
  static_assert(std::is_trivially_default_constructible_v<c10::Half>);
  static_assert(std::is_trivially_default_constructible_v<c10::BFloat16>);
  static_assert(std::is_trivially_default_constructible_v<c10::Float8_e4m3fn>);
  static_assert(std::is_trivially_default_constructible_v<c10::Float8_e4m3fnuz>);
  union Packed {  // vLLM's fp8 packing
    uint32_t u;
    c10::Float8_e4m3fn f[4];
  };
  Packed p;
  for (int i = 0; i < 4; ++i) p.f[i] = c10::Float8_e4m3fn(static_cast<float>(i));
  CHECK(static_cast<float>(p.f[3]) == 3.f);
  CHECK(c10::Half().x == 0);  // value-initialized: +0
  c10::Half h(1.5f);
  h += c10::Half(2.f);  // torch's arithmetic on the element types
  CHECK(static_cast<float>(h) == 3.5f);
}
