// Dispatch overhead: the cost of calling a kernel through the dispatcher, against calling it
// directly, for ops taking 1 and 3 tensors (`/1`, `/3`).
//
//   bench_dispatch [--json PATH] [Google Benchmark flags]
//
//   BM_Direct   the kernel through a function pointer the compiler cannot see through
//   BM_Unboxed  a typed handle obtained once, .call(...) per iteration
//   BM_Boxed    CallBoxed(&stack), the stack built per iteration as a real caller does
//   BM_Lookup   Dispatcher::Get().FindOp("ns::op")
//   BM_Torch*   the same cases through libtorch's c10 dispatcher, when built with
//               OPREG_BENCH_TORCH (torch_ext/bench_dispatch_torch.cc)
//
// The kernel is a no-op returning its first tensor, so every figure is dispatch overhead plus
// one Tensor handle copy. After the runs a summary (per-call ns, unboxed minus direct, and
// opreg/torch ratios) follows Google Benchmark's table; with a non-console
// --benchmark_format it goes to stderr, so the JSON on stdout stays parseable.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/dispatcher.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::IValue;
using opreg::Stack;
using opreg::Tensor;

Tensor Noop1(const Tensor& a) { return a; }
Tensor Noop3(const Tensor& a, const Tensor& b, const Tensor& c) { return a; }

OPREG_LIBRARY(opreg_bench, m) {
  m.def("noop1(Tensor a) -> Tensor");
  m.def("noop3(Tensor a, Tensor b, Tensor c) -> Tensor");
}
OPREG_LIBRARY_IMPL(opreg_bench, CPU, m) {
  m.impl("noop1", &Noop1);
  m.impl("noop3", &Noop3);
}

// Volatile, so each call loads the pointer and calls through it: no inlining, no hoisting.
Tensor (*volatile g_noop1)(const Tensor&) = &Noop1;
Tensor (*volatile g_noop3)(const Tensor&, const Tensor&, const Tensor&) = &Noop3;

const char* OpName(int64_t tensors) {
  return tensors == 1 ? "opreg_bench::noop1" : "opreg_bench::noop3";
}

Tensor Input() { return opreg::zeros({8}, opreg::DType::kFloat32); }

void BM_Direct(benchmark::State& state) {
  const Tensor a = Input(), b = Input(), c = Input();
  if (state.range(0) == 1) {
    for (auto _ : state) {
      Tensor r = g_noop1(a);
      benchmark::DoNotOptimize(r);
    }
  } else {
    for (auto _ : state) {
      Tensor r = g_noop3(a, b, c);
      benchmark::DoNotOptimize(r);
    }
  }
}
BENCHMARK(BM_Direct)->Arg(1)->Arg(3);

void BM_Unboxed(benchmark::State& state) {
  const Tensor a = Input(), b = Input(), c = Input();
  const opreg::OperatorHandle op = opreg::Dispatcher::Get().FindOpOrThrow(OpName(state.range(0)));
  if (state.range(0) == 1) {
    const auto typed = op.typed<Tensor(const Tensor&)>();
    for (auto _ : state) {
      Tensor r = typed.call(a);
      benchmark::DoNotOptimize(r);
    }
  } else {
    const auto typed = op.typed<Tensor(const Tensor&, const Tensor&, const Tensor&)>();
    for (auto _ : state) {
      Tensor r = typed.call(a, b, c);
      benchmark::DoNotOptimize(r);
    }
  }
}
BENCHMARK(BM_Unboxed)->Arg(1)->Arg(3);

void BM_Boxed(benchmark::State& state) {
  const Tensor a = Input(), b = Input(), c = Input();
  const int64_t n = state.range(0);
  const opreg::OperatorHandle op = opreg::Dispatcher::Get().FindOpOrThrow(OpName(n));
  for (auto _ : state) {
    Stack stack;
    stack.reserve(static_cast<size_t>(n));
    stack.emplace_back(a);
    if (n == 3) {
      stack.emplace_back(b);
      stack.emplace_back(c);
    }
    op.CallBoxed(&stack);
    benchmark::DoNotOptimize(stack.data());
  }
}
BENCHMARK(BM_Boxed)->Arg(1)->Arg(3);

void BM_Lookup(benchmark::State& state) {
  const char* name = OpName(state.range(0));
  for (auto _ : state) {
    auto op = opreg::Dispatcher::Get().FindOp(name);
    benchmark::DoNotOptimize(op);
  }
}
BENCHMARK(BM_Lookup)->Arg(1)->Arg(3);

// ---- Summary ----

// Collects per-call real time (ns) by benchmark name ("BM_Unboxed/3"), on top of whichever
// reporter prints the runs. With --benchmark_repetitions the median stands for the case.
template <class Base>
class CollectingReporter : public Base {
 public:
  using Base::Base;
  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    Base::ReportRuns(runs);
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      const bool is_median = run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate &&
                             run.aggregate_name == "median";
      if (run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate && !is_median) continue;
      std::string name = run.run_name.function_name;
      if (!run.run_name.args.empty()) name += "/" + run.run_name.args;
      if (is_median || medians_.count(name) == 0) {
        ns_[name] = run.GetAdjustedRealTime() * NsPerUnit(run.time_unit);
        if (is_median) medians_[name] = true;
      }
    }
  }
  const std::map<std::string, double>& ns() const { return ns_; }

 private:
  static double NsPerUnit(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kSecond:
        return 1e9;
      case benchmark::kMillisecond:
        return 1e6;
      case benchmark::kMicrosecond:
        return 1e3;
      default:
        return 1.0;
    }
  }
  std::map<std::string, double> ns_;
  std::map<std::string, bool> medians_;
};

void PrintSummary(const std::map<std::string, double>& ns, std::FILE* out) {
  auto get = [&](const std::string& name) -> const double* {
    auto it = ns.find(name);
    return it == ns.end() ? nullptr : &it->second;
  };
  static const char* const kCases[] = {"Direct", "Unboxed", "Boxed", "Lookup"};
  bool any_torch = false;
  for (const auto& [name, t] : ns) any_torch |= name.rfind("BM_Torch", 0) == 0;

  std::fprintf(out, "\nDispatch overhead (ns per call, real time)\n");
  std::fprintf(out, "%-10s %8s %8s", "case", "opreg/1", "opreg/3");
  if (any_torch)
    std::fprintf(out, " %8s %8s %12s %12s", "torch/1", "torch/3", "opreg/torch1", "opreg/torch3");
  std::fprintf(out, "\n");
  auto cell = [&](const double* v) {
    if (v != nullptr) {
      std::fprintf(out, " %8.1f", *v);
    } else {
      std::fprintf(out, " %8s", "-");
    }
  };
  for (const char* c : kCases) {
    const std::string mine = std::string("BM_") + c;
    const std::string theirs = std::string("BM_Torch") + c;
    std::fprintf(out, "%-10s", c);
    cell(get(mine + "/1"));
    cell(get(mine + "/3"));
    if (any_torch) {
      cell(get(theirs + "/1"));
      cell(get(theirs + "/3"));
      for (const char* n : {"/1", "/3"}) {
        const double* o = get(mine + n);
        const double* t = get(theirs + n);
        if (o != nullptr && t != nullptr && *t > 0) {
          std::fprintf(out, " %12.2f", *o / *t);
        } else {
          std::fprintf(out, " %12s", "-");
        }
      }
    }
    std::fprintf(out, "\n");
  }
  for (const char* n : {"/1", "/3"}) {
    const double* direct = get(std::string("BM_Direct") + n);
    const double* unboxed = get(std::string("BM_Unboxed") + n);
    if (direct != nullptr && unboxed != nullptr) {
      std::fprintf(out, "unboxed overhead over direct%s: %.1f ns\n", n, *unboxed - *direct);
    }
  }
  if (any_torch) {
    for (const char* n : {"/1", "/3"}) {
      const double* direct = get(std::string("BM_TorchDirect") + n);
      const double* unboxed = get(std::string("BM_TorchUnboxed") + n);
      if (direct != nullptr && unboxed != nullptr) {
        std::fprintf(out, "torch unboxed overhead over direct%s: %.1f ns\n", n, *unboxed - *direct);
      }
      // libtorch's cheapest path: the autograd keys excluded by the caller.
      const double* below = get(std::string("BM_TorchUnboxedBelowAutograd") + n);
      if (direct != nullptr && below != nullptr) {
        std::fprintf(out, "torch unboxed (below autograd) overhead over direct%s: %.1f ns\n", n,
                     *below - *direct);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // `--json PATH` is shorthand for --benchmark_out=PATH --benchmark_out_format=json.
  std::vector<std::string> args;
  std::string format = "console";
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      args.push_back(std::string("--benchmark_out=") + argv[++i]);
      args.push_back("--benchmark_out_format=json");
      continue;
    }
    if (a.rfind("--benchmark_format=", 0) == 0) format = a.substr(19);
    args.push_back(a);
  }
  std::vector<char*> rest;
  for (std::string& a : args) rest.push_back(a.data());
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;

  std::map<std::string, double> ns;
  if (format == "json") {
    CollectingReporter<benchmark::JSONReporter> reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    ns = reporter.ns();
  } else if (format == "console") {
    // Colour only on a terminal, as Google Benchmark's default --benchmark_color=auto does.
    CollectingReporter<benchmark::ConsoleReporter> reporter(
        isatty(fileno(stdout)) ? benchmark::ConsoleReporter::OO_Color
                               : benchmark::ConsoleReporter::OO_None);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    ns = reporter.ns();
  } else {
    // csv (deprecated) and anything else: Google Benchmark's own handling, no summary.
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  if (!ns.empty()) PrintSummary(ns, format == "console" ? stdout : stderr);
  return 0;
}
