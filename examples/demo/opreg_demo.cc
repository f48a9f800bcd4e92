// The end-to-end demo (the README's main job): opreg's built-in ops on a transformer MLP block,
// run eagerly and as a captured graph replayed on planned memory, then a symmetric-memory
// all-reduce between two real processes. Exits non-zero if any result is wrong.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "opreg/core/allocator.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/planner/planned_executor.h"
#include "opreg/ops/ops.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace {

using opreg::DType;
using opreg::Tensor;
namespace ops = opreg::ops;
namespace sm = opreg::symm_mem;

Tensor Random(std::vector<int64_t> sizes, uint32_t seed, float scale = 1.0f) {
  Tensor t = opreg::empty(sizes, DType::kFloat32);
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr<float>()[i] = dist(gen);
  return t;
}

double MaxDiff(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    m = std::max(m, std::abs(double(a.data_ptr<float>()[i]) - double(b.data_ptr<float>()[i])));
  }
  return m;
}

bool Check(bool ok, const char* what) {
  std::printf("  %-58s %s\n", what, ok ? "ok" : "FAILED");
  return ok;
}

// y = x + W2 silu_and_mul(W1 rms_norm(x))
bool MlpBlock() {
  const int64_t tokens = 64, hidden = 256, inter = 512;
  Tensor x = Random({tokens, hidden}, 1), norm_w = Random({hidden}, 2, 0.1f);
  Tensor w1 = Random({2 * inter, hidden}, 3, 0.05f), w2 = Random({hidden, inter}, 4, 0.05f);
  for (int64_t i = 0; i < hidden; ++i) norm_w.data_ptr<float>()[i] += 1.0f;

  Tensor eager =
      ops::add(x, ops::linear(ops::silu_and_mul(ops::linear(ops::rms_norm(x, norm_w), w1)), w2));

  opreg::GraphRecorder rec;
  opreg::Value vx = rec.AddInput(x), vn = rec.AddInput(norm_w), v1 = rec.AddInput(w1),
               v2 = rec.AddInput(w2);
  opreg::Value h = rec.Call("opreg::rms_norm", {vx, vn, 1e-6})[0];
  opreg::Value up = rec.Call("opreg::linear", {h, v1})[0];
  opreg::Value act = rec.Call("opreg::silu_and_mul", {up})[0];
  opreg::Value down = rec.Call("opreg::linear", {act, v2})[0];
  opreg::Value y = rec.Call("opreg::add", {vx, down})[0];
  rec.MarkOutput(y);
  opreg::Graph graph = rec.Finish();
  std::printf("graph:\n%s", graph.str().c_str());
  std::vector<Tensor> inputs = {x, norm_w, w1, w2};
  // A replay checked by the verifier (guard bytes after every slot, lifetimes, aliasing)...
  opreg::PlannedExecutor verified(graph, {64, opreg::VerifyMode::kAssert});
  Tensor checked = verified.Run(inputs)[0];
  // ...and the production plan, without guard bytes.
  opreg::PlannedExecutor exec(graph);
  Tensor planned = exec.Run(inputs)[0];
  const opreg::MemoryPlan& plan = exec.PlanFor(inputs);
  std::printf("plan: %s\n", plan.Summary().c_str());

  Tensor out = opreg::empty({tokens, hidden}, DType::kFloat32);
  const auto before = opreg::GetCpuAllocatorStats();
  exec.Run(inputs, {out});
  const int64_t calls = opreg::GetCpuAllocatorStats().allocations - before.allocations;
  bool ok = true;
  ok &= Check(MaxDiff(eager, planned) == 0.0, "planned replay equals eager execution (bitwise)");
  ok &= Check(MaxDiff(eager, checked) == 0.0, "verified replay (guard bytes, lifetimes) is clean");
  ok &= Check(MaxDiff(eager, out) == 0.0, "replay into a given output buffer equals eager");
  ok &= Check(calls == 0, "replay with given outputs made no allocator call");
  ok &= Check(plan.arena_bytes <= plan.eager_peak_bytes, "arena <= op-by-op eager peak");
  return ok;
}

// Two processes all-reduce through symmetric memory; each checks the rank-order sum.
bool AllReduce() {
  char tmpl[] = "/tmp/opreg_demo_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const int world = 2;
  const int64_t n = 1 << 16;
  std::vector<pid_t> pids;
  // A child inherits the parent's unflushed stdio buffers and would print them again when it
  // flushes (stdout is fully buffered through a pipe): flush first, and children leave with
  // _exit, which runs no atexit handlers and flushes nothing of the parent's.
  std::fflush(nullptr);
  for (int rank = 0; rank < world; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      int code = 0;
      try {
        sm::GroupOptions options;
        options.timeout = std::chrono::seconds(20);
        sm::Group::Create("demo", rank, world, std::make_shared<sm::FileStore>(dir), options);
        Tensor x = sm::empty({n}, DType::kFloat32, "demo");
        for (int64_t i = 0; i < n; ++i) x.data_ptr<float>()[i] = float(i % 97) * (rank + 1);
        auto y = opreg::Dispatcher::Get()
                     .FindOpOrThrow("symm_mem::one_shot_all_reduce")
                     .CallBoxed({opreg::IValue(x), opreg::IValue("sum"), opreg::IValue("demo")})[0]
                     .toTensor();
        for (int64_t i = 0; i < n; ++i) {
          if (y.data_ptr<float>()[i] != float(i % 97) * 1 + float(i % 97) * 2) code = 1;
        }
        if (!sm::IsSymmetric(y)) code = 2;
        sm::Group::Destroy("demo");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
        code = 3;
      }
      std::fflush(nullptr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  std::filesystem::remove_all(dir);
  return Check(ok, "2-process one_shot_all_reduce: rank-order sum, output symmetric");
}

}  // namespace

int main() {
  std::printf("== MLP block: built-in ops, eager vs captured graph on planned memory\n");
  bool ok = MlpBlock();
  std::printf("== symmetric memory: all-reduce between two processes\n");
  ok &= AllReduce();
  std::printf("demo: %s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
