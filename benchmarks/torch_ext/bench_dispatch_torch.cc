// The bench_dispatch cases against libtorch's c10 dispatcher, for comparison (built only with
// OPREG_BENCH_TORCH). Same kernel (a no-op returning its first tensor), same shapes of call:
//
//   BM_TorchDirect   the kernel through a volatile function pointer
//   BM_TorchUnboxed  findSchemaOrThrow(...).typed<Sig>() once, .call(...) per iteration
//   BM_TorchBoxed    callBoxed(&stack), the stack built per iteration
//   BM_TorchLookup   c10::Dispatcher::singleton().findSchema({"ns::op", ""})
//
// The op gets a CPU kernel only, as a kernel library registers it (TORCH_LIBRARY_IMPL(ns, CPU)),
// so a call also passes libtorch's autograd layer (its fallback for ops without an autograd
// kernel), as it does for any caller with grad mode on. BM_TorchUnboxedBelowAutograd calls
// with the autograd keys excluded, the cheapest path libtorch offers.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <benchmark/benchmark.h>
#include <torch/library.h>

namespace {

at::Tensor TorchNoop1(const at::Tensor& a) { return a; }
at::Tensor TorchNoop3(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) { return a; }

TORCH_LIBRARY(opreg_bench_torch, m) {
  m.def("noop1(Tensor a) -> Tensor");
  m.def("noop3(Tensor a, Tensor b, Tensor c) -> Tensor");
}
TORCH_LIBRARY_IMPL(opreg_bench_torch, CPU, m) {
  m.impl("noop1", &TorchNoop1);
  m.impl("noop3", &TorchNoop3);
}

at::Tensor (*volatile g_torch_noop1)(const at::Tensor&) = &TorchNoop1;
at::Tensor (*volatile g_torch_noop3)(const at::Tensor&, const at::Tensor&,
                                     const at::Tensor&) = &TorchNoop3;

const char* OpName(int64_t tensors) {
  return tensors == 1 ? "opreg_bench_torch::noop1" : "opreg_bench_torch::noop3";
}

at::Tensor Input() { return at::zeros({8}, at::kFloat); }

void BM_TorchDirect(benchmark::State& state) {
  const at::Tensor a = Input(), b = Input(), c = Input();
  if (state.range(0) == 1) {
    for (auto _ : state) {
      at::Tensor r = g_torch_noop1(a);
      benchmark::DoNotOptimize(r);
    }
  } else {
    for (auto _ : state) {
      at::Tensor r = g_torch_noop3(a, b, c);
      benchmark::DoNotOptimize(r);
    }
  }
}
BENCHMARK(BM_TorchDirect)->Arg(1)->Arg(3);

template <bool kBelowAutograd>
void TorchUnboxed(benchmark::State& state) {
  const at::Tensor a = Input(), b = Input(), c = Input();
  const c10::OperatorHandle op =
      c10::Dispatcher::singleton().findSchemaOrThrow(OpName(state.range(0)), "");
  std::optional<c10::impl::ExcludeDispatchKeyGuard> guard;
  if (kBelowAutograd) guard.emplace(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
  if (state.range(0) == 1) {
    const auto typed = op.typed<at::Tensor(const at::Tensor&)>();
    for (auto _ : state) {
      at::Tensor r = typed.call(a);
      benchmark::DoNotOptimize(r);
    }
  } else {
    const auto typed =
        op.typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
    for (auto _ : state) {
      at::Tensor r = typed.call(a, b, c);
      benchmark::DoNotOptimize(r);
    }
  }
}
void BM_TorchUnboxed(benchmark::State& state) { TorchUnboxed<false>(state); }
void BM_TorchUnboxedBelowAutograd(benchmark::State& state) { TorchUnboxed<true>(state); }
BENCHMARK(BM_TorchUnboxed)->Arg(1)->Arg(3);
BENCHMARK(BM_TorchUnboxedBelowAutograd)->Arg(1)->Arg(3);

void BM_TorchBoxed(benchmark::State& state) {
  const at::Tensor a = Input(), b = Input(), c = Input();
  const int64_t n = state.range(0);
  const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(OpName(n), "");
  for (auto _ : state) {
    torch::jit::Stack stack;
    stack.reserve(static_cast<size_t>(n));
    stack.emplace_back(a);
    if (n == 3) {
      stack.emplace_back(b);
      stack.emplace_back(c);
    }
    op.callBoxed(&stack);
    benchmark::DoNotOptimize(stack.data());
  }
}
BENCHMARK(BM_TorchBoxed)->Arg(1)->Arg(3);

void BM_TorchLookup(benchmark::State& state) {
  const char* name = OpName(state.range(0));
  for (auto _ : state) {
    auto op = c10::Dispatcher::singleton().findSchema({name, ""});
    benchmark::DoNotOptimize(op);
  }
}
BENCHMARK(BM_TorchLookup)->Arg(1)->Arg(3);

}  // namespace
