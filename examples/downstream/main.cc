// Calls the mykernels ops through the opreg dispatcher, unboxed and boxed, and checks every
// result. Exits 1 with a message on the first wrong value; prints "downstream: OK" at the end.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <tuple>

#include "mykernels.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/dispatcher.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::Dispatcher;
using opreg::IValue;
using opreg::Stack;
using opreg::Tensor;

int failures = 0;

void Expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "downstream: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

// x = [-2, -1, 0, 1, 2, 3] (f32).
Tensor Input() { return opreg::arange(-2.0, 4.0, 1.0, opreg::DType::kFloat32); }

// Checks y == x * alpha elementwise (exact: small integers times powers of two and 3).
void ExpectScaled(const Tensor& y, const Tensor& x, double alpha, const std::string& what) {
  Expect(y.defined() && y.sizes() == x.sizes(), what + ": wrong shape");
  if (!y.defined() || y.sizes() != x.sizes()) return;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double want = x.at({i}) * alpha;
    if (y.at({i}) != want) {
      Expect(false, what + ": element " + std::to_string(i) + " is " + std::to_string(y.at({i})) +
                        ", expected " + std::to_string(want));
      return;
    }
  }
}

void Run() {
  // Registration errors in static initializers are logged, not thrown: surface them here.
  for (const std::string& e : opreg::StaticRegistrationErrors()) {
    Expect(false, "registration error: " + e);
  }
  const std::string ns = mykernels::LibraryName();
  Dispatcher& d = Dispatcher::Get();
  const Tensor x = Input();

  // ---- Unboxed: a typed handle calls the CPU kernel through a function pointer ----
  auto scale = d.FindOpOrThrow(ns + "::scale").typed<Tensor(const Tensor&, double)>();
  ExpectScaled(scale.call(x, 3.0), x, 3.0, "unboxed scale(x, 3.0)");

  auto scale_out =
      d.FindOpOrThrow(ns + "::scale.out").typed<Tensor(const Tensor&, double, const Tensor&)>();
  Tensor out = opreg::zeros({6}, opreg::DType::kFloat32);
  Tensor returned = scale_out.call(x, -1.0, out);
  ExpectScaled(out, x, -1.0, "unboxed scale.out(x, -1.0, out=out): out");
  Expect(returned.is_alias_of(out), "scale.out must return its out argument");

  auto count = d.FindOpOrThrow(ns + "::count_positive").typed<int64_t(const Tensor&)>();
  const int64_t positives = count.call(x);
  Expect(positives == 3, "count_positive(x) = " + std::to_string(positives) + ", expected 3");

  auto minmax = d.FindOpOrThrow(ns + "::minmax").typed<std::tuple<Tensor, Tensor>(const Tensor&)>();
  auto [lo, hi] = minmax.call(x);
  Expect(lo.item() == -2.0 && hi.item() == 3.0, "minmax(x) = (" + std::to_string(lo.item()) + ", " +
                                                    std::to_string(hi.item()) +
                                                    "), expected (-2, 3)");

  // ---- Boxed: arguments as IValues, defaults filled and keywords bound from the schema ----
  const opreg::OperatorHandle scale_op = d.FindOpOrThrow(ns + "::scale");
  Stack r = scale_op.CallBoxed({IValue(x)}, {{"alpha", IValue(0.5)}});
  Expect(r.size() == 1 && r[0].isTensor(), "boxed scale returns one tensor");
  if (r.size() == 1 && r[0].isTensor()) ExpectScaled(r[0].toTensor(), x, 0.5, "boxed scale");
  r = scale_op.CallBoxed({IValue(x)});  // alpha defaults to 2.
  if (r.size() == 1 && r[0].isTensor()) ExpectScaled(r[0].toTensor(), x, 2.0, "boxed default");

  Stack stack{IValue(x)};
  d.FindOpOrThrow(ns + "::minmax").CallBoxed(&stack);
  Expect(
      stack.size() == 2 && stack[0].toTensor().item() == -2.0 && stack[1].toTensor().item() == 3.0,
      "boxed minmax returns (-2, 3)");

  // A wrong argument type is an error naming op and argument, not a crash.
  bool threw = false;
  try {
    scale_op.CallBoxed({IValue(x), IValue(std::string("two"))});
  } catch (const std::exception& e) {
    threw = std::string(e.what()).find("argument 'alpha'") != std::string::npos;
  }
  Expect(threw, "boxed scale with a str alpha must throw naming 'alpha'");

  // ---- Meta: shapes only, through the Meta kernels ----
  Tensor m = scale.call(opreg::empty({4, 5}, opreg::DType::kFloat32, opreg::Device::meta()), 1.0);
  Expect(m.is_meta() && m.sizes() == opreg::IntArrayRef{4, 5}, "scale on meta gives meta [4, 5]");

  // ---- Introspection ----
  absl::StatusOr<std::string> dump = d.DumpOp(ns + "::scale");
  Expect(dump.ok(), "DumpOp(mykernels::scale) succeeds");
  if (dump.ok()) {
    std::printf("%s\n", dump->c_str());
    Expect(dump->find("CPU: registered at ") != std::string::npos &&
               dump->find("kernels_cpu.cc") != std::string::npos,
           "the dump names the CPU kernel's location");
  }
  std::optional<opreg::OutVariantLink> link =
      d.OutVariantOf(opreg::OperatorName(ns + "::scale", ""));
  Expect(link.has_value() && link->out.str() == ns + "::scale.out",
         "scale is linked to its out variant scale.out");
  if (link.has_value()) {
    std::printf("out variant of %s: %s\n", link->functional.str().c_str(), link->out.str().c_str());
  }
}

}  // namespace

int main() {
  try {
    Run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "downstream: FAILED: uncaught exception: %s\n", e.what());
    return 1;
  }
  if (failures != 0) {
    std::fprintf(stderr, "downstream: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("downstream: OK\n");
  return 0;
}
