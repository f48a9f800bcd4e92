// bench_symm_mem: all-reduce latency (p50, p99) and bandwidth of opreg's host-backend one-shot
// and two-shot all-reduce at W ranks, 1 KiB .. 64 MiB (x4), next to OpenMPI's MPI_Allreduce.
//
//   mpirun -np 2 bench_symm_mem [--iters N] [--max-bytes B] [--json PATH]   (MPI mode)
//   bench_symm_mem [--world W] [--iters N] [--max-bytes B] [--json PATH]    (fork mode)
//
// MPI mode (built with OPREG_BUILD_MPI and launched by mpirun): the ranks are MPI's, the group
// is bootstrapped over MPI (CreateMpiGroup: MpiStore), and MPI_Allreduce(MPI_SUM, MPI_FLOAT,
// out of place) is timed in the same run on the same sizes. Fork mode (no mpirun, or no MPI in
// the build): W forked ranks share a FileStore in a temp dir; the MPI columns are n/a (JSON
// null).
//
// Methodology (the same for every op, opreg's and MPI's): per size and op, `warmup` untimed
// calls then `iters` timed ones (200 up to 1 MiB, then fewer so a size takes ~ the same time,
// at least 10). Before every call all ranks meet in the same barrier (MPI_Barrier in MPI mode,
// the group's signal-pad barrier on a separate allocation in fork mode), so calls never
// overlap and every call starts cold (no pipelining across calls). Each rank times its own
// call with steady_clock; the latency of one call is the MAX over ranks (gathered through
// symmetric memory after the timed loop), so p50/p99 are of the slowest rank's view. Bandwidth
// is bus bandwidth as NCCL reports it: bytes / p50 * 2 (W - 1) / W.
//
// MPI settings: MPI is initialized with MPI_THREAD_MULTIPLE (MpiStore's service thread needs it;
// measured here it costs MPI_Allreduce ~0.1-0.3 us at 1 KiB). OpenMPI's shared-memory
// transport is vader; on this machine its CMA single-copy path is slower than copy-in/copy-out
// at large sizes, so give MPI its best with
//   mpirun -np 2 --mca btl self,vader --mca btl_vader_single_copy_mechanism none bench_symm_mem
// (both configurations are easy to compare: the flags change only MPI's side).
//
// Output: a table (both opreg algorithms, the faster of the two per size ("best", by p50), MPI,
// and MPI p50 / best p50: > 1 means opreg is faster), and with --json a list of rows
// {op, world, bytes, p50_us, p99_us, busbw_gbps, mpi_p50_us, mpi_p99_us, mpi_busbw_gbps,
// speedup_vs_mpi, mode} for op = one_shot_all_reduce, two_shot_all_reduce_ and all_reduce (the
// best of the two; its "algo" says which). MPI fields are null in fork mode.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "opreg/core/tensor_factories.h"
#include "opreg/symm_mem/collectives.h"
#include "opreg/symm_mem/symmetric_memory.h"

#ifdef OPREG_BENCH_WITH_MPI
#include <mpi.h>

#include "opreg/symm_mem/mpi_store.h"
#endif

namespace sm = opreg::symm_mem;

namespace {

using Clock = std::chrono::steady_clock;

struct Stat {
  double p50 = 0, p99 = 0;
};

struct Row {
  size_t bytes = 0;
  Stat one, two;
  std::optional<Stat> mpi;
};

struct Config {
  int world = 2;
  int iters = 200;
  size_t max_bytes = size_t{64} << 20;
  std::string json;
};

double Pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

double BusBw(size_t bytes, double us, int world) {  // GB/s
  return static_cast<double>(bytes) / (us * 1e3) * 2.0 * (world - 1) / world;
}

std::string Num(double v, const char* fmt = "%.3f") {
  char b[64];
  std::snprintf(b, sizeof(b), fmt, v);
  return b;
}

// The harness one rank runs: a barrier between calls and the max-over-ranks gather of times.
class Harness {
 public:
  Harness(std::shared_ptr<sm::Group> g, int max_iters, std::function<void()> barrier)
      : g_(std::move(g)), max_iters_(max_iters), barrier_(std::move(barrier)) {
    times_ = sm::empty({static_cast<int64_t>(max_iters)}, opreg::DType::kFloat64, g_->name());
    times_h_ = sm::Rendezvous(times_);
  }

  // Times `iters` calls of `f` after `warmup` untimed ones; the max over ranks per call.
  Stat Time(int warmup, int iters, const std::function<void()>& f) {
    std::vector<double> mine;
    for (int i = 0; i < warmup + iters; ++i) {
      barrier_();
      const auto t0 = Clock::now();
      f();
      const auto t1 = Clock::now();
      if (i >= warmup) mine.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    // Gather: every rank publishes its times in its symmetric buffer, then reads all.
    std::memcpy(times_h_->buffer_ptr(g_->rank()), mine.data(), mine.size() * sizeof(double));
    times_h_->barrier(0);
    std::vector<double> worst(mine.size(), 0.0);
    for (int r = 0; r < g_->world_size(); ++r) {
      const auto* t = static_cast<const double*>(times_h_->buffer_ptr(r));
      for (size_t i = 0; i < worst.size(); ++i) worst[i] = std::max(worst[i], t[i]);
    }
    times_h_->barrier(0);  // nobody overwrites its times while a peer still reads them
    return {Pct(worst, 0.5), Pct(worst, 0.99)};
  }

 private:
  std::shared_ptr<sm::Group> g_;
  int max_iters_;
  std::function<void()> barrier_;
  opreg::Tensor times_;
  std::shared_ptr<sm::SymmetricMemory> times_h_;
};

int IterationsFor(size_t bytes, int iters) {
  const double scale = static_cast<double>(size_t{1} << 20) / static_cast<double>(bytes);
  return std::max(std::min(iters, 10), std::min(iters, static_cast<int>(iters * scale)));
}

// Runs every size on this rank; rank 0's rows are the results.
std::vector<Row> RunSizes(const Config& cfg, std::shared_ptr<sm::Group> g,
                          std::function<void()> barrier, bool with_mpi) {
  const std::string name = g->name();
  Harness h(g, cfg.iters, std::move(barrier));
  std::vector<Row> rows;
  for (size_t bytes = 1024; bytes <= cfg.max_bytes; bytes *= 4) {
    const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
    opreg::Tensor x = sm::empty({n}, opreg::DType::kFloat32, name);
    opreg::Tensor out = opreg::empty({n}, opreg::DType::kFloat32);
    std::fill_n(x.data_ptr<float>(), n, 1.0f);
    std::fill_n(out.data_ptr<float>(), n, 0.0f);
    const int iters = IterationsFor(bytes, cfg.iters);
    const int warmup = bytes >= (size_t{16} << 20) ? 2 : 5;
    Row row;
    row.bytes = bytes;
    row.one = h.Time(warmup, iters,
                     [&] { sm::host::one_shot_all_reduce_out(x, "sum", name, out); });
    row.two = h.Time(warmup, iters, [&] { sm::host::two_shot_all_reduce_(x, "sum", name); });
#ifdef OPREG_BENCH_WITH_MPI
    if (with_mpi) {
      std::vector<float> send(static_cast<size_t>(n), 1.0f), recv(static_cast<size_t>(n), 0.0f);
      row.mpi = h.Time(warmup, iters, [&] {
        MPI_Allreduce(send.data(), recv.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      });
    }
#endif
    rows.push_back(row);
  }
  return rows;
}

void Report(const Config& cfg, int world, const std::vector<Row>& rows, const char* mode) {
  std::printf("bench_symm_mem: mode %s, world %d; latency in us (max over ranks per call), "
              "busbw GB/s at p50\n", mode, world);
  std::printf("%10s | %9s %9s | %9s %9s | %-8s %9s %8s | %9s %9s %8s | %8s\n", "bytes",
              "1shot p50", "p99", "2shot p50", "p99", "best", "p50", "busbw", "MPI p50", "p99",
              "busbw", "MPI/best");
  for (const Row& r : rows) {
    const bool one_best = r.one.p50 <= r.two.p50;
    const Stat& best = one_best ? r.one : r.two;
    std::string mpi50 = "n/a", mpi99 = "n/a", mpibw = "n/a", ratio = "n/a";
    if (r.mpi) {
      mpi50 = Num(r.mpi->p50, "%.1f");
      mpi99 = Num(r.mpi->p99, "%.1f");
      mpibw = Num(BusBw(r.bytes, r.mpi->p50, world), "%.2f");
      ratio = Num(r.mpi->p50 / best.p50, "%.2fx");
    }
    std::printf("%10zu | %9.1f %9.1f | %9.1f %9.1f | %-8s %9.1f %8.2f | %9s %9s %8s | %8s\n",
                r.bytes, r.one.p50, r.one.p99, r.two.p50, r.two.p99,
                one_best ? "one_shot" : "two_shot", best.p50, BusBw(r.bytes, best.p50, world),
                mpi50.c_str(), mpi99.c_str(), mpibw.c_str(), ratio.c_str());
  }
  std::fflush(stdout);
  if (cfg.json.empty()) return;
  FILE* f = std::fopen(cfg.json.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "bench_symm_mem: cannot write %s\n", cfg.json.c_str());
    return;
  }
  std::fprintf(f, "[\n");
  bool first = true;
  for (const Row& r : rows) {
    const bool one_best = r.one.p50 <= r.two.p50;
    struct {
      const char* op;
      const Stat* s;
      const char* algo;
    } entries[] = {{"one_shot_all_reduce", &r.one, "one_shot"},
                   {"two_shot_all_reduce_", &r.two, "two_shot"},
                   {"all_reduce", one_best ? &r.one : &r.two, one_best ? "one_shot" : "two_shot"}};
    for (const auto& e : entries) {
      const std::string mpi50 = r.mpi ? Num(r.mpi->p50) : "null";
      const std::string mpi99 = r.mpi ? Num(r.mpi->p99) : "null";
      const std::string mpibw = r.mpi ? Num(BusBw(r.bytes, r.mpi->p50, world)) : "null";
      const std::string speed = r.mpi ? Num(r.mpi->p50 / e.s->p50) : "null";
      std::fprintf(f,
                   "%s  {\"op\": \"%s\", \"algo\": \"%s\", \"mode\": \"%s\", \"world\": %d, "
                   "\"bytes\": %zu, \"p50_us\": %.3f, \"p99_us\": %.3f, \"busbw_gbps\": %.3f, "
                   "\"mpi_p50_us\": %s, \"mpi_p99_us\": %s, \"mpi_busbw_gbps\": %s, "
                   "\"speedup_vs_mpi\": %s}",
                   first ? "" : ",\n", e.op, e.algo, mode, world, r.bytes, e.s->p50, e.s->p99,
                   BusBw(r.bytes, e.s->p50, world), mpi50.c_str(), mpi99.c_str(), mpibw.c_str(),
                   speed.c_str());
      first = false;
    }
  }
  std::fprintf(f, "\n]\n");
  std::fclose(f);
}

sm::GroupOptions BenchOptions(const Config& cfg) {
  sm::GroupOptions opts;
  opts.heap_bytes = 2 * cfg.max_bytes + (size_t{16} << 20);
  opts.timeout = sm::Millis(60000);
  return opts;
}

// Fork mode: one rank process.
int RunForkedRank(const Config& cfg, int rank, const std::string& dir) {
  auto g = sm::Group::Create("bench", rank, cfg.world, std::make_shared<sm::FileStore>(dir),
                             BenchOptions(cfg));
  {
    opreg::Tensor sync = sm::empty({1}, opreg::DType::kFloat32, "bench");
    std::shared_ptr<sm::SymmetricMemory> sh = sm::Rendezvous(sync);
    std::vector<Row> rows = RunSizes(cfg, g, [&] { sh->barrier(0); }, false);
    if (rank == 0) Report(cfg, cfg.world, rows, "fork");
  }
  g.reset();
  sm::Group::Destroy("bench");
  return 0;
}

int RunForked(const Config& cfg) {
  char tmpl[] = "/tmp/opreg_bench_symm_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  std::vector<pid_t> pids;
  std::fflush(nullptr);  // else each child would print the parent's buffered output again
  for (int r = 0; r < cfg.world; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      int rc = 1;
      try {
        rc = RunForkedRank(cfg, r, dir);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      std::fflush(stdout);
      _exit(rc);
    }
    pids.push_back(pid);
  }
  int rc = 0;
  for (pid_t p : pids) {
    int status = 0;
    waitpid(p, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
  }
  rmdir(dir.c_str());
  return rc;
}

bool LaunchedByMpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

#ifdef OPREG_BENCH_WITH_MPI
int RunMpi(const Config& cfg, int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int rc = 0;
  try {
    std::shared_ptr<sm::MpiStore> store;
    {
      auto g = sm::CreateMpiGroup("bench", MPI_COMM_WORLD, BenchOptions(cfg), &store);
      std::vector<Row> rows = RunSizes(cfg, g, [] { MPI_Barrier(MPI_COMM_WORLD); }, true);
      if (rank == 0) Report(cfg, world, rows, "mpi");
    }
    sm::Group::Destroy("bench");
    store->Shutdown(sm::Millis(30000));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--world") cfg.world = std::atoi(next().c_str());
    else if (a == "--iters") cfg.iters = std::atoi(next().c_str());
    else if (a == "--max-bytes") cfg.max_bytes = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--json") cfg.json = next();
    else {
      std::fprintf(stderr, "usage: %s [--world W] [--iters N] [--max-bytes B] [--json PATH]\n"
                   "  under mpirun: MPI mode (W = the number of MPI ranks, MPI_Allreduce "
                   "alongside)\n", argv[0]);
      return 2;
    }
  }
  if (cfg.world < 1 || cfg.iters < 1 || cfg.max_bytes < 1024) {
    std::fprintf(stderr, "bench_symm_mem: bad --world, --iters or --max-bytes\n");
    return 2;
  }
  if (LaunchedByMpirun()) {
#ifdef OPREG_BENCH_WITH_MPI
    return RunMpi(cfg, &argc, &argv);
#else
    std::fprintf(stderr, "bench_symm_mem: launched by mpirun but built without MPI "
                 "(OPREG_BUILD_MPI=OFF); running fork mode on every rank is pointless\n");
    return 2;
#endif
  }
  return RunForked(cfg);
}
