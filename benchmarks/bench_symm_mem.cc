// bench_symm_mem: host-backend all-reduce latency at W ranks (forked processes sharing a
// FileStore in a temp dir), 1 KiB .. 64 MiB, one-shot and two-shot, p50 / p99 in microseconds.
//
//   bench_symm_mem [--world W] [--iters N] [--max-bytes B] [--json PATH]
//
// Rank 0 times each call (barrier-to-barrier as seen by rank 0) and prints a table; --json
// writes a list of {op, world, bytes, p50_us, p99_us, mpi_p50_us, mpi_p99_us, busbw_gbps}. The
// MPI columns are null in this skeleton (the OpenMPI MPI_Allreduce comparison is not built yet).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "opreg/core/tensor_factories.h"
#include "opreg/symm_mem/collectives.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace sm = opreg::symm_mem;

namespace {

struct Row {
  std::string op;
  size_t bytes;
  double p50, p99;
};

double Pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

int RunRank(int rank, int world, const std::string& dir, int iters, size_t max_bytes,
            const std::string& json) {
  sm::GroupOptions opts;
  opts.heap_bytes = 2 * max_bytes + (size_t{16} << 20);
  opts.timeout = sm::Millis(60000);
  auto g = sm::Group::Create("bench", rank, world, std::make_shared<sm::FileStore>(dir), opts);
  std::vector<Row> rows;
  for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
    const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
    opreg::Tensor x = sm::empty({n}, opreg::DType::kFloat32, "bench");
    opreg::Tensor out = opreg::empty({n}, opreg::DType::kFloat32);
    std::fill_n(x.data_ptr<float>(), n, 1.0f);
    const int it = bytes >= (size_t{8} << 20) ? std::max(5, iters / 20) : iters;
    for (const char* op : {"one_shot_all_reduce", "two_shot_all_reduce_"}) {
      std::vector<double> us;
      for (int i = 0; i < it + 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (op[1] == 'n') {
          sm::host::one_shot_all_reduce_out(x, "sum", "bench", out);
        } else {
          sm::host::two_shot_all_reduce_(x, "sum", "bench");
        }
        const auto t1 = std::chrono::steady_clock::now();
        if (i >= 3) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
      rows.push_back({op, bytes, Pct(us, 0.5), Pct(us, 0.99)});
    }
  }
  if (rank == 0) {
    std::printf("%-22s %6s %12s %12s %12s\n", "op", "world", "bytes", "p50_us", "p99_us");
    for (const Row& r : rows) {
      std::printf("%-22s %6d %12zu %12.1f %12.1f\n", r.op.c_str(), world, r.bytes, r.p50, r.p99);
    }
    if (!json.empty()) {
      FILE* f = std::fopen(json.c_str(), "w");
      if (f == nullptr) return 1;
      std::fprintf(f, "[\n");
      for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::fprintf(f,
                     "  {\"op\": \"%s\", \"world\": %d, \"bytes\": %zu, \"p50_us\": %.3f, "
                     "\"p99_us\": %.3f, \"mpi_p50_us\": null, \"mpi_p99_us\": null}%s\n",
                     r.op.c_str(), world, r.bytes, r.p50, r.p99, i + 1 < rows.size() ? "," : "");
      }
      std::fprintf(f, "]\n");
      std::fclose(f);
    }
  }
  rows.clear();
  g.reset();
  sm::Group::Destroy("bench");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int world = 2, iters = 200;
  size_t max_bytes = size_t{64} << 20;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--world") world = std::atoi(next().c_str());
    else if (a == "--iters") iters = std::atoi(next().c_str());
    else if (a == "--max-bytes") max_bytes = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--json") json = next();
    else {
      std::fprintf(stderr, "usage: %s [--world W] [--iters N] [--max-bytes B] [--json PATH]\n",
                   argv[0]);
      return 2;
    }
  }
  char tmpl[] = "/tmp/opreg_bench_symm_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      int rc = 1;
      try {
        rc = RunRank(r, world, dir, iters, max_bytes, json);
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
