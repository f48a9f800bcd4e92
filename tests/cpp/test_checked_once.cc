// CheckedOnce: an out kernel run by out resolution may skip what the functional op's meta
// function checked, and only then; the built-in ops check a functional call's arguments once.
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "opreg/core/error.h"
#include "opreg/core/recycled_tensors.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/checked_once.h"
#include "opreg/dispatch/library.h"
#include "opreg/ops/ops.h"

namespace {

using opreg::CheckedOnce;
using opreg::Device;
using opreg::Dispatcher;
using opreg::DispatchKey;
using opreg::DType;
using opreg::IValue;
using opreg::Library;
using opreg::OperatorHandle;
using opreg::OperatorName;
using opreg::RecycledTensors;
using opreg::SourceLocation;
using opreg::Stack;
using opreg::Tensor;

const CheckedOnce::Pair kPair{"once::f", "once::f.out"};
const CheckedOnce::Pair kOtherPair{"once::g", "once::g.out"};

// What the test op's meta function does, and how its out kernel asks.
enum class Meta { kVouch, kVouchOtherPair, kVouchOtherResult, kVouchOtherInput, kSilent };
enum class Out { kTake, kTakeSwapped, kTakeOtherValue, kTakeUndefinedFirst, kTakeTwice };
Meta g_meta = Meta::kVouch;
Out g_out = Out::kTake;
std::vector<bool> g_taken;  // each Take() of the out kernel, in order

Tensor FMeta(const Tensor& x, int64_t k) {
  Tensor r = opreg::empty_like(x);
  const uint64_t w = CheckedOnce::Word(k);
  switch (g_meta) {
    case Meta::kVouch:
      CheckedOnce::Vouch(kPair, {&x}, {w}, {&r});
      break;
    case Meta::kVouchOtherPair:
      CheckedOnce::Vouch(kOtherPair, {&x}, {w}, {&r});
      break;
    case Meta::kVouchOtherResult: {  // vouches for one tensor, returns another
      Tensor other = opreg::empty_like(x);
      CheckedOnce::Vouch(kPair, {&x}, {w}, {&other});
      break;
    }
    case Meta::kVouchOtherInput: {  // vouches for tensors it was not given
      Tensor other = opreg::empty_like(x);
      CheckedOnce::Vouch(kPair, {&other}, {w}, {&r});
      break;
    }
    case Meta::kSilent:
      break;
  }
  return r;
}

// out = x + k
Tensor& FOut(const Tensor& x, int64_t k, Tensor& out) {
  const uint64_t w = CheckedOnce::Word(k);
  switch (g_out) {
    case Out::kTake:
      g_taken.push_back(CheckedOnce::Take(kPair, {&x, &out}, {w}));
      break;
    case Out::kTakeSwapped:
      g_taken.push_back(CheckedOnce::Take(kPair, {&out, &x}, {w}));
      break;
    case Out::kTakeUndefinedFirst: {  // an undefined tensor keeps its place in the list
      const Tensor undefined;
      g_taken.push_back(CheckedOnce::Take(kPair, {&undefined, &x, &out}, {w}));
      break;
    }
    case Out::kTakeOtherValue:
      g_taken.push_back(CheckedOnce::Take(kPair, {&x, &out}, {w + 1}));
      break;
    case Out::kTakeTwice:
      g_taken.push_back(CheckedOnce::Take(kPair, {&x, &out}, {w}));
      g_taken.push_back(CheckedOnce::Take(kPair, {&x, &out}, {w}));
      break;
  }
  for (int64_t i = 0; i < x.numel(); ++i) out.set({i}, x.at({i}) + static_cast<double>(k));
  return out;
}

struct Ops {
  Library lib{Library::FRAGMENT, "once", std::nullopt, "once.cc", 1};
  Ops() {
    g_meta = Meta::kVouch;
    g_out = Out::kTake;
    g_taken.clear();
    lib.def("f(Tensor x, int k=1) -> Tensor");
    lib.def("f.out(Tensor x, int k=1, *, Tensor(a!) out) -> Tensor(a!)");
    lib.impl("f", DispatchKey::kMeta, &FMeta);
    lib.impl("f.out", DispatchKey::kCPU, &FOut);
  }
  Tensor F(const Tensor& x) const {
    return Dispatcher::Get().FindOpOrThrow("once::f").typed<Tensor(const Tensor&, int64_t)>().call(
        x, 1);
  }
};

TEST_CASE("a functional call's out kernel may skip what its meta function vouched for",
          "[checked_once]") {
  Ops ops;
  const Tensor x = opreg::arange(4, DType::kFloat32);
  const uint64_t before = CheckedOnce::TakenOnThisThread();
  Tensor y = ops.F(x);
  CHECK(g_taken == std::vector<bool>{true});
  CHECK(CheckedOnce::TakenOnThisThread() == before + 1);
  CHECK(y.at({3}) == 4.0);

  SECTION("a direct out call checks everything") {
    g_taken.clear();
    Tensor out = opreg::empty({4}, DType::kFloat32);
    Dispatcher::Get()
        .FindOpOrThrow("once::f.out")
        .typed<Tensor&(const Tensor&, int64_t, Tensor&)>()
        .call(x, 1, out);
    CHECK(g_taken == std::vector<bool>{false});
  }
  SECTION("outside any call") { CHECK_FALSE(CheckedOnce::Take(kPair, {&x}, {})); }
  // What the out kernel's Take()s return in a functional call, with these behaviours.
  auto taken_with = [&](Meta meta, Out out) {
    g_meta = meta;
    g_out = out;
    g_taken.clear();
    ops.F(x);
    return g_taken;
  };
  SECTION("only the first Take of a call counts") {
    CHECK(taken_with(Meta::kVouch, Out::kTakeTwice) == std::vector<bool>{true, false});
  }
  SECTION("the out kernel's values must be those vouched for") {
    CHECK(taken_with(Meta::kVouch, Out::kTakeOtherValue) == std::vector<bool>{false});
  }
  SECTION("an undefined tensor is not left out") {
    CHECK(taken_with(Meta::kVouch, Out::kTakeUndefinedFirst) == std::vector<bool>{false});
  }
  SECTION("the out kernel's tensors must be the call's, in order") {
    CHECK(taken_with(Meta::kVouch, Out::kTakeSwapped) == std::vector<bool>{false});
  }
  SECTION("a vouch for another pair of ops does not count") {
    CHECK(taken_with(Meta::kVouchOtherPair, Out::kTake) == std::vector<bool>{false});
  }
  SECTION("a vouch for a result the meta function did not return does not count") {
    CHECK(taken_with(Meta::kVouchOtherResult, Out::kTake) == std::vector<bool>{false});
  }
  SECTION("a vouch for tensors the meta function was not given does not count") {
    CHECK(taken_with(Meta::kVouchOtherInput, Out::kTake) == std::vector<bool>{false});
  }
  SECTION("a meta function that does not vouch") {
    CHECK(taken_with(Meta::kSilent, Out::kTake) == std::vector<bool>{false});
  }
  SECTION("a meta function registered later that does not vouch takes it away") {
    {
      Library override{Library::IMPL, "once", DispatchKey::kMeta, "override.cc", 1};
      override.impl("f", [](const Tensor& t, int64_t) { return opreg::empty_like(t); });
      CHECK(taken_with(Meta::kVouch, Out::kTake) == std::vector<bool>{false});
    }
    // The vouching meta function serves again.
    CHECK(taken_with(Meta::kVouch, Out::kTake) == std::vector<bool>{true});
  }
}

// How many of the call's Take()s were true: 1 when the built-in op's functional form checked its
// arguments once (its meta function's checks, taken as done by its `.out` kernel).
template <class F>
uint64_t TakenBy(F&& call) {
  const uint64_t before = CheckedOnce::TakenOnThisThread();
  call();
  return CheckedOnce::TakenOnThisThread() - before;
}

TEST_CASE("every built-in functional op checks its arguments once", "[checked_once]") {
  namespace ops = opreg::ops;
  const Tensor a = opreg::ones({2, 8}, DType::kFloat32);
  const Tensor b = opreg::ones({2, 8}, DType::kFloat32);
  const Tensor w = opreg::ones({8}, DType::kFloat32);
  const Tensor w2 = opreg::ones({3, 8}, DType::kFloat32);
  const Tensor bias = opreg::ones({3}, DType::kFloat32);
  CHECK(TakenBy([&] { ops::add(a, b, 2); }) == 1);
  CHECK(TakenBy([&] { ops::mul(a, b); }) == 1);
  CHECK(TakenBy([&] { ops::split_add(a, b); }) == 1);
  CHECK(TakenBy([&] { ops::rms_norm(a, w); }) == 1);
  CHECK(TakenBy([&] { ops::silu_and_mul(a); }) == 1);
  CHECK(TakenBy([&] { ops::per_token_quant(a, DType::kInt8); }) == 1);
  CHECK(TakenBy([&] { ops::topk(a, 3); }) == 1);
  CHECK(TakenBy([&] { ops::softmax(a); }) == 1);
  CHECK(TakenBy([&] { ops::linear(a, w2); }) == 1);
  CHECK(TakenBy([&] { ops::linear(a, w2, bias); }) == 1);
  // Their out forms check everything.
  Tensor out = opreg::empty({2, 8}, DType::kFloat32);
  CHECK(TakenBy([&] { ops::mul_out(a, b, out); }) == 0);
  CHECK(TakenBy([&] { ops::rms_norm_out(a, w, 1e-6, out); }) == 0);
}

// Ops of another library linked to a built-in's out variant, with meta functions that run the
// built-in's meta function (which vouches) and then size the outputs wrong.
std::tuple<Tensor, Tensor> TopkWrongMeta(const Tensor& x, int64_t /*k*/, int64_t dim,
                                         bool largest) {
  return opreg::ops::topk(x, 1, dim, largest);  // sized for k = 1
}
Tensor SiluWrongMeta(const Tensor& x) {
  Tensor r = opreg::ops::silu_and_mul(x);  // vouched for, then freed
  r = Tensor();
  return opreg::empty({1}, DType::kFloat32, Device::meta());  // may take r's address
}

TEST_CASE("another op's meta function cannot vouch with a built-in's meta function",
          "[checked_once]") {
  Library lib{Library::FRAGMENT, "once_other", std::nullopt, "once_other.cc", 1};
  lib.def("tk(Tensor x, int k, int dim=-1, bool largest=True) -> (Tensor values, Tensor indices)");
  lib.impl("tk", DispatchKey::kMeta, &TopkWrongMeta);
  lib.def("sm(Tensor x) -> Tensor");
  lib.impl("sm", DispatchKey::kMeta, &SiluWrongMeta);
  auto link = [](const char* functional, const char* out, std::vector<std::string> outs) {
    auto handle =
        Dispatcher::Get().LinkOutVariant(OperatorName(functional, ""), OperatorName(out, "out"),
                                         outs, SourceLocation{"once_other.cc", 2});
    REQUIRE(handle.ok());
    return *std::move(handle);
  };
  auto tk_link = link("once_other::tk", "opreg::topk", {"values", "indices"});
  auto sm_link = link("once_other::sm", "opreg::silu_and_mul", {"out"});
  const Tensor x = opreg::ones({4, 64}, DType::kFloat32);
  const uint64_t before = CheckedOnce::TakenOnThisThread();
  using TopkSig = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool);
  auto tk = Dispatcher::Get().FindOpOrThrow("once_other::tk").typed<TopkSig>();
  CHECK_THROWS_WITH(tk.call(x, 32, -1, true),
                    Catch::Contains("expected shape [4, 32], got [4, 1]"));
  CHECK_THROWS_WITH(
      Dispatcher::Get().FindOpOrThrow("once_other::sm").typed<Tensor(const Tensor&)>().call(x),
      Catch::Contains("expected shape [4, 32], got [1]"));
  CHECK(CheckedOnce::TakenOnThisThread() == before);
}

TEST_CASE("a built-in's out kernel checks a call whose meta function is not its own",
          "[checked_once]") {
  const Tensor a = opreg::ones({4}, DType::kFloat32);
  {
    // A meta function that sizes the output wrong: the out kernel's own checks catch it.
    Library override{Library::IMPL, "opreg", DispatchKey::kMeta, "override.cc", 1};
    override.impl("mul", [](const Tensor& self, const Tensor&) {
      return opreg::empty({1}, self.dtype(), Device::meta());
    });
    CHECK_THROWS_WITH(opreg::ops::mul(a, a),
                      Catch::Contains("output #0: expected shape [4], got [1]"));
  }
  CHECK(opreg::ops::mul(a, a).at({3}) == 1.0);
}

// Overrides of topk's own kernels that remove themselves (the built-in kernels serve again) and
// run the built-in with another k than the call's, on the call's own tensors.
std::unique_ptr<Library> g_override;

TEST_CASE("an override that runs a built-in with other values gets its checks", "[checked_once]") {
  const Tensor x = opreg::ones({4, 64}, DType::kFloat32);
  const uint64_t before = CheckedOnce::TakenOnThisThread();
  SECTION("the meta function: sized for k = 1, the out kernel runs with k = 32") {
    g_override = std::make_unique<Library>(Library::IMPL, "opreg", DispatchKey::kMeta, "o.cc", 1);
    g_override->impl("topk", [](const Tensor& t, int64_t, int64_t dim, bool largest) {
      g_override.reset();
      return opreg::ops::topk(t, 1, dim, largest);  // the built-in meta function, vouching
    });
    CHECK_THROWS_WITH(opreg::ops::topk(x, 32),
                      Catch::Contains("expected shape [4, 32], got [4, 1]"));
  }
  SECTION("the out kernel: the call is for k = 1, the built-in out kernel runs with k = 32") {
    g_override = std::make_unique<Library>(Library::IMPL, "opreg", DispatchKey::kCPU, "o.cc", 1);
    g_override->impl("topk.out", [](const Tensor& t, int64_t, int64_t dim, bool largest,
                                    Tensor& values, Tensor& indices) {
      g_override.reset();
      return opreg::ops::topk_out(t, 32, dim, largest, values, indices);
    });
    CHECK_THROWS_WITH(opreg::ops::topk(x, 1),
                      Catch::Contains("expected shape [4, 32], got [4, 1]"));
  }
  SECTION("the meta function: the vouched result's object refilled with a smaller layout") {
    g_override = std::make_unique<Library>(Library::IMPL, "opreg", DispatchKey::kMeta, "o.cc", 1);
    g_override->impl("topk", [](const Tensor& t, int64_t k, int64_t dim, bool largest) {
      g_override.reset();
      auto [values, indices] = opreg::ops::topk(t, k, dim, largest);  // vouched for
      // Gives the result's object back to the thread's cache (when nothing else holds it); the
      // next meta tensor made takes it: the same address, a smaller layout.
      RecycledTensors::Give(&values, opreg::RecyclePool::kOwned);
      Tensor smaller = opreg::empty({4, 1}, DType::kFloat32, Device::meta());
      return std::make_tuple(smaller, indices);
    });
    CHECK_THROWS_WITH(opreg::ops::topk(x, 32),
                      Catch::Contains("expected shape [4, 32], got [4, 1]"));
  }
  SECTION("the out kernel: the input's object refilled with a larger layout (same address)") {
    g_override = std::make_unique<Library>(Library::IMPL, "opreg", DispatchKey::kCPU, "o.cc", 1);
    g_override->impl("topk.out", [](const OperatorHandle& op, Stack* stack) {
      g_override.reset();
      // Gives the input's object back to the thread's cache (when nothing else holds it) and
      // takes one for a 100 times larger tensor: the same object when it was recycled.
      static std::vector<float> big(400 * 64, 1.0f);
      Tensor input = std::move((*stack)[0]).toTensor();
      RecycledTensors::Give(&input);
      (*stack)[0] = IValue(RecycledTensors::FromBlob(
          big.data(), {400, 64}, {64, 1}, DType::kFloat32, Device::cpu(), nullptr, nullptr));
      op.CallBoxed(stack);
    });
    // Boxed, so that the stack holds the only handle to the input.
    Stack stack{IValue(opreg::ones({4, 64}, DType::kFloat32)), IValue(int64_t{32}),
                IValue(int64_t{-1}), IValue(true)};
    CHECK_THROWS_WITH(Dispatcher::Get().FindOpOrThrow("opreg::topk").CallBoxed(&stack),
                      Catch::Contains("expected shape [400, 32], got [4, 32]"));
  }
  g_override.reset();
  CHECK(CheckedOnce::TakenOnThisThread() == before);
  CHECK(std::get<0>(opreg::ops::topk(x, 2)).sizes() == opreg::IntArrayRef({4, 2}));
}

}  // namespace
