// Symmetric memory on the host backend, with real processes: each multi-rank test forks W rank
// processes that bootstrap a group from a FileStore in a fresh temporary directory. A child
// reports failure through its exit status (and prints why); the parent asserts every rank
// exited 0, that no rank hung (a watchdog kills them), and that the store directory is empty.
// Every child also checks it leaked no fd and no heap mapping after Group::Destroy.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fork_ranks.h"
#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/dispatcher.h"
#include "opreg/ops/ops.h"
#include "opreg/symm_mem/collectives.h"
#include "opreg/symm_mem/store.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace sm = opreg::symm_mem;
using opreg::DType;
using opreg::Tensor;
using Clock = std::chrono::steady_clock;

namespace {

std::string MakeTempDir() {
  char tmpl[] = "/tmp/opreg_symm_test_XXXXXX";
  char* d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  return d;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  return out;
}

void RemoveDir(const std::string& dir) {
  for (const auto& f : ListDir(dir)) unlink((dir + "/" + f).c_str());
  rmdir(dir.c_str());
}

int CountFds() { return static_cast<int>(ListDir("/proc/self/fd").size()); }

int CountHeapMaps() {
  std::ifstream in("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find("opreg_symm:") != std::string::npos;
  return n;
}

struct RankEnv {
  int rank;
  int world;
  std::shared_ptr<sm::Group> group;
};

// Forks `world` ranks running `body`, each inside a group "g" over a fresh FileStore. Returns
// the exit codes. With `check_clean`, every rank verifies no fd / mapping leaked and the parent
// that the store directory is empty afterwards.
std::vector<int> RunRanks(int world, const std::function<void(RankEnv&)>& body,
                          sm::GroupOptions opts = {}, bool check_clean = true,
                          int watchdog_s = 25) {
  const std::string dir = MakeTempDir();
  const std::vector<int> codes = opreg_test::ForkRanks(
      world,
      [&](int r) {
        const int fds0 = CountFds();
        {
          RankEnv env{r, world, nullptr};
          auto store = std::make_shared<sm::FileStore>(dir);
          env.group = sm::Group::Create("g", r, world, store, opts);
          body(env);
          env.group.reset();
          sm::Group::Destroy("g");
        }
        if (check_clean) {
          OPREG_CHILD_CHECK(CountFds() == fds0);
          OPREG_CHILD_CHECK(CountHeapMaps() == 0);
        }
        return 0;
      },
      watchdog_s);
  if (check_clean) {
    std::vector<std::string> left_files = ListDir(dir);
    INFO("store dir not empty: " << (left_files.empty() ? "" : left_files[0]));
    CHECK(left_files.empty());
  }
  RemoveDir(dir);
  return codes;
}

void RequireAllZero(const std::vector<int>& codes) {
  for (size_t r = 0; r < codes.size(); ++r) {
    INFO("rank " << r << " exit code " << codes[r]);
    CHECK(codes[r] == 0);
  }
}

// ---- Deterministic inputs and serial references ----------------------------------------------

float Value(uint64_t seed, int rank, int64_t i) {
  uint64_t x =
      seed * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(rank) << 40) ^ static_cast<uint64_t>(i);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return static_cast<float>(static_cast<double>(x % 20001) / 10000.0 - 1.0) * 3.f;
}

template <class T>
void FillRank(T* p, int64_t n, uint64_t seed, int rank) {
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(Value(seed, rank, i));
}

template <class T>
std::vector<T> SerialSum(int64_t n, uint64_t seed, int world) {
  std::vector<T> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float acc = static_cast<float>(static_cast<T>(Value(seed, 0, i)));
    for (int r = 1; r < world; ++r) acc += static_cast<float>(static_cast<T>(Value(seed, r, i)));
    out[i] = static_cast<T>(acc);
  }
  return out;
}

template <class T>
bool BitsEqual(const Tensor& t, const T* ref, int64_t n) {
  return t.numel() == n && std::memcmp(t.data_ptr(), ref, sizeof(T) * n) == 0;
}

template <class T>
void CollectivesBody(RankEnv& e, DType dtype, uint64_t seed0) {
  std::mt19937 rng(static_cast<uint32_t>(seed0));  // same sequence on every rank
  const int w = e.world, me = e.rank;
  auto& disp = opreg::Dispatcher::Get();
  auto one_shot = disp.FindOpOrThrow("symm_mem::one_shot_all_reduce");
  auto one_shot_out = disp.FindOpOrThrow("symm_mem::one_shot_all_reduce_out");
  auto two_shot = disp.FindOpOrThrow("symm_mem::two_shot_all_reduce_");
  auto all_gather = disp.FindOpOrThrow("symm_mem::all_gather_out");
  auto reduce_scatter = disp.FindOpOrThrow("symm_mem::reduce_scatter_out");
  auto fused = disp.FindOpOrThrow("symm_mem::fused_all_reduce_add_rms_norm_");
  for (int iter = 0; iter < 4; ++iter) {
    const uint64_t seed = seed0 * 100 + iter;
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 5);
    const int64_t cols = 1 + static_cast<int64_t>(rng() % 700);  // odd tails included
    const int64_t n = rows * cols;
    Tensor x = sm::empty({rows, cols}, dtype, "g");
    OPREG_CHILD_CHECK(sm::IsSymmetric(x));
    auto fill = [&] { FillRank(x.data_ptr<T>(), n, seed, me); };
    const std::vector<T> ref = SerialSum<T>(n, seed, w);

    // one-shot, functional (resolves through the out variant) and out.
    fill();
    opreg::Stack s =
        one_shot.CallBoxed({opreg::IValue(x), opreg::IValue("sum"), opreg::IValue("g")});
    Tensor y = s.at(0).toTensor();
    // The out is a registered (accepted) symmetric argument: resolution allocates it from the
    // group's heap, on every rank alike.
    OPREG_CHILD_CHECK(sm::IsSymmetric(y));
    OPREG_CHILD_CHECK(BitsEqual<T>(y, ref.data(), n));
    Tensor out = opreg::empty({rows, cols}, dtype);
    one_shot_out.CallBoxed({opreg::IValue(x), opreg::IValue("sum"), opreg::IValue("g")},
                           {{"out", opreg::IValue(out)}});
    OPREG_CHILD_CHECK(BitsEqual<T>(out, ref.data(), n));

    // two-shot in place.
    two_shot.CallBoxed({opreg::IValue(x), opreg::IValue("sum"), opreg::IValue("g")});
    OPREG_CHILD_CHECK(BitsEqual<T>(x, ref.data(), n));

    // all-gather.
    fill();
    Tensor gathered = opreg::empty({rows * w, cols}, dtype);
    all_gather.CallBoxed({opreg::IValue(x), opreg::IValue("g")},
                         {{"out", opreg::IValue(gathered)}});
    std::vector<T> gref(static_cast<size_t>(n * w));
    for (int r = 0; r < w; ++r) FillRank(gref.data() + r * n, n, seed, r);
    OPREG_CHILD_CHECK(BitsEqual<T>(gathered, gref.data(), n * w));

    // reduce-scatter: input of w * rows rows.
    Tensor rs_in = sm::empty({w * rows, cols}, dtype, "g");
    FillRank(rs_in.data_ptr<T>(), n * w, seed + 7, me);
    const std::vector<T> rs_ref = SerialSum<T>(n * w, seed + 7, w);
    Tensor rs_out = opreg::empty({rows, cols}, dtype);
    reduce_scatter.CallBoxed({opreg::IValue(rs_in), opreg::IValue("sum"), opreg::IValue("g")},
                             {{"out", opreg::IValue(rs_out)}});
    OPREG_CHILD_CHECK(BitsEqual<T>(rs_out, rs_ref.data() + me * n, n));

    // fused all-reduce + residual add + rms_norm against opreg::fused_add_rms_norm_ on the
    // serial all-reduce.
    fill();
    Tensor residual = opreg::empty({rows, cols}, dtype);
    FillRank(residual.data_ptr<T>(), n, seed + 13, 0);
    Tensor weight = opreg::empty({cols}, dtype);
    FillRank(weight.data_ptr<T>(), cols, seed + 17, 0);
    Tensor ref_in = opreg::empty({rows, cols}, dtype);
    std::memcpy(ref_in.data_ptr(), ref.data(), sizeof(T) * n);
    Tensor ref_res = residual.clone();
    opreg::ops::fused_add_rms_norm_(ref_in, ref_res, weight, 1e-6);
    fused.CallBoxed({opreg::IValue(x), opreg::IValue(residual), opreg::IValue(weight),
                     opreg::IValue(1e-6), opreg::IValue("g")});
    OPREG_CHILD_CHECK(std::memcmp(x.data_ptr(), ref_in.data_ptr(), sizeof(T) * n) == 0);
    OPREG_CHILD_CHECK(std::memcmp(residual.data_ptr(), ref_res.data_ptr(), sizeof(T) * n) == 0);
  }
}

sm::GroupOptions Opts(int timeout_ms, size_t heap = size_t{8} << 20) {
  sm::GroupOptions o;
  o.timeout = sm::Millis(timeout_ms);
  o.heap_bytes = heap;
  return o;
}

struct OmpOne {
  OmpOne() { setenv("OMP_NUM_THREADS", "1", 1); }
} omp_one;

}  // namespace

TEST_CASE("FileStore: set, get, add, delete, timeouts name the key and the ranks") {
  const std::string dir = MakeTempDir();
  {
    sm::FileStore s(dir);
    s.Set("a/b c", "hello");
    CHECK(s.Get("a/b c", sm::Millis(10)) == "hello");
    s.Set("a/b c", "again");
    std::string v;
    CHECK(s.TryGet("a/b c", &v));
    CHECK(v == "again");
    CHECK(s.Add("n", 2) == 2);
    CHECK(s.Add("n", 3) == 5);
    const auto t0 = Clock::now();
    REQUIRE_THROWS_WITH(s.Get("missing", sm::Millis(100)),
                        Catch::Contains("timed out after 100 ms waiting for key 'missing'"));
    CHECK(Clock::now() - t0 < std::chrono::seconds(2));
    s.Set("p/0", "x");
    s.Set("p/2", "x");
    REQUIRE_THROWS_WITH(s.WaitRanks("p/", 4, 0, sm::Millis(50), "test"),
                        Catch::Contains("rank(s) 1, 3 did not arrive"));
    for (const char* k : {"a/b c", "n", "p/0", "p/2"}) s.Delete(k);
    CHECK(ListDir(dir).empty());
  }
  RemoveDir(dir);
}

TEST_CASE("Single-rank group: ops, argument errors, meta, registry") {
  const std::string dir = MakeTempDir();
  auto store = std::make_shared<sm::FileStore>(dir);
  const int fds0 = CountFds();
  {
    auto g = sm::Group::Create("solo", 0, 1, store, Opts(1000));
    CHECK(sm::Group::Get("solo") == g);
    REQUIRE_THROWS_WITH(sm::Group::Get("nope"), Catch::Contains("no group named 'nope'"));
    REQUIRE_THROWS_WITH(sm::Group::Create("solo", 0, 1, store), Catch::Contains("already exists"));
    Tensor x = sm::empty({3, 5}, DType::kFloat32, "solo");
    for (int i = 0; i < 15; ++i) x.data_ptr<float>()[i] = static_cast<float>(i);
    CHECK(sm::IsSymmetric(x));
    CHECK(sm::IsSymmetric(x.narrow(0, 1, 2)));
    auto h = sm::Rendezvous(x);
    CHECK(h->buffer_ptr(0) == x.data_ptr());
    CHECK(h->world_size() == 1);
    Tensor local = opreg::zeros({3, 5}, DType::kFloat32);
    CHECK_FALSE(sm::IsSymmetric(local));
    REQUIRE_THROWS_WITH(sm::Rendezvous(local), Catch::Contains("not in symmetric memory"));

    auto op = opreg::Dispatcher::Get().FindOpOrThrow("symm_mem::one_shot_all_reduce");
    opreg::Stack s = op.CallBoxed({opreg::IValue(x), opreg::IValue("sum"), opreg::IValue("solo")});
    CHECK(s.at(0).toTensor().at({2, 4}) == 14.0);
    REQUIRE_THROWS_WITH(
        op.CallBoxed({opreg::IValue(local), opreg::IValue("sum"), opreg::IValue("solo")}),
        Catch::Contains("[symm_mem::one_shot_all_reduce] argument 'input' (#0): expected a "
                        "tensor in the symmetric memory of group 'solo'"));
    REQUIRE_THROWS_WITH(
        op.CallBoxed({opreg::IValue(x), opreg::IValue("max"), opreg::IValue("solo")}),
        Catch::Contains("argument 'reduce_op' (#1): expected 'sum'"));
    auto two = opreg::Dispatcher::Get().FindOpOrThrow("symm_mem::two_shot_all_reduce_");
    REQUIRE_THROWS_WITH(
        two.CallBoxed({opreg::IValue(local), opreg::IValue("sum"), opreg::IValue("solo")}),
        Catch::Contains("[symm_mem::two_shot_all_reduce_] argument 'input' (#0)"));
    REQUIRE_THROWS_WITH(
        two.CallBoxed({opreg::IValue(x), opreg::IValue("sum"), opreg::IValue("other")}),
        Catch::Contains("no group named 'other'"));
    Tensor ints = sm::empty({4}, DType::kInt32, "solo");
    REQUIRE_THROWS_WITH(
        two.CallBoxed({opreg::IValue(ints), opreg::IValue("sum"), opreg::IValue("solo")}),
        Catch::Contains("expected dtype f32, f16 or bf16, got"));
    auto rs = opreg::Dispatcher::Get().FindOpOrThrow("symm_mem::reduce_scatter_out");
    Tensor bad_out = opreg::empty({2}, DType::kFloat32);
    REQUIRE_THROWS_WITH(
        rs.CallBoxed({opreg::IValue(x), opreg::IValue("sum"), opreg::IValue("solo")},
                     {{"out", opreg::IValue(bad_out)}}),
        Catch::Contains("argument 'out' (#3): expected 15 elements"));
    // The out checks every backend shares (collective_checks.h). (A meta out would send the
    // call to the Meta kernel, as in PyTorch, so the device check shows on CUDA calls.)
    auto one_out = opreg::Dispatcher::Get().FindOpOrThrow("symm_mem::one_shot_all_reduce_out");
    auto call_one = [&](const Tensor& out) {
      return one_out.CallBoxed({opreg::IValue(x), opreg::IValue("sum"), opreg::IValue("solo")},
                               {{"out", opreg::IValue(out)}});
    };
    CHECK_THROWS_WITH(call_one(opreg::empty({3, 5}, DType::kBFloat16)),
                      Catch::Contains("argument 'out' (#3): expected dtype f32, got bf16"));
    CHECK_THROWS_WITH(call_one(opreg::empty({3, 6}, DType::kFloat32).narrow(1, 0, 5)),
                      Catch::Contains("expected a contiguous tensor, got a strided one"));
    CHECK_THROWS_WITH(call_one(opreg::empty({5, 3}, DType::kFloat32)),
                      Catch::Contains("expected the shape of input"));
    CHECK_THROWS_WITH(call_one(x), Catch::Contains("expected memory not overlapping 'input'"));
    auto ag = opreg::Dispatcher::Get().FindOpOrThrow("symm_mem::all_gather_out");
    CHECK_THROWS_WITH(ag.CallBoxed({opreg::IValue(x), opreg::IValue("solo")},
                                   {{"out", opreg::IValue(opreg::empty({5, 3}, DType::kFloat32))}}),
                      Catch::Contains("expected shape [world * size(0), ...] of input"));

    // Meta: shapes only.
    Tensor m = opreg::empty({2, 3}, DType::kBFloat16, opreg::Device::meta());
    opreg::Stack ms = op.CallBoxed({opreg::IValue(m), opreg::IValue("sum"), opreg::IValue("solo")});
    CHECK(ms.at(0).toTensor().is_meta());
    CHECK(ms.at(0).toTensor().dtype() == DType::kBFloat16);

    // Registered symmetric arguments.
    for (const char* name :
         {"symm_mem::one_shot_all_reduce", "symm_mem::one_shot_all_reduce_out",
          "symm_mem::two_shot_all_reduce_", "symm_mem::all_gather_out",
          "symm_mem::reduce_scatter_out", "symm_mem::fused_all_reduce_add_rms_norm_"}) {
      auto info = opreg::Dispatcher::Get().SymmMemArgsOf(opreg::OperatorName(name, ""),
                                                         opreg::SymmMemRequirement::kRequired);
      INFO(name);
      REQUIRE(info.has_value());
      CHECK(info->names == std::vector<std::string>{"input"});
    }

    // Heap: frees coalesce and drift-free reuse; exhaustion is a clear error.
    REQUIRE_THROWS_WITH(sm::empty({int64_t{1} << 40}, DType::kUInt8, "solo"),
                        Catch::Contains("is exhausted"));
    g.reset();
    sm::Group::Destroy("solo");
    CHECK_FALSE(sm::Group::Exists("solo"));
    CHECK(sm::IsSymmetric(x));  // tensors keep the heap alive
  }
  CHECK(CountFds() == fds0);
  CHECK(CountHeapMaps() == 0);
  CHECK(ListDir(dir).empty());
  RemoveDir(dir);
}

TEST_CASE("Collectives are bitwise equal to the serial rank-order reference (W = 2, 3, 4)") {
  for (int w : {2, 3, 4}) {
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      INFO("world " << w << " dtype " << opreg::DTypeName(dt));
      auto codes = RunRanks(
          w,
          [&](RankEnv& e) {
            const uint64_t seed = 1000 * w + static_cast<uint64_t>(dt);
            if (dt == DType::kFloat32) CollectivesBody<float>(e, dt, seed);
            if (dt == DType::kFloat16) CollectivesBody<opreg::Half>(e, dt, seed);
            if (dt == DType::kBFloat16) CollectivesBody<opreg::BFloat16>(e, dt, seed);
          },
          Opts(10000));
      RequireAllZero(codes);
    }
  }
}

TEST_CASE("10,000 barrier reuses and put/wait signals") {
  for (int w : {2, 3}) {
    const int iters = w == 2 ? 10000 : 3000;
    auto codes = RunRanks(
        w,
        [&](RankEnv& e) {
          Tensor t = sm::empty({64}, DType::kInt32, "g");
          auto h = sm::Rendezvous(t);
          int32_t* mine = t.data_ptr<int32_t>();
          for (int i = 0; i < iters; ++i) {
            mine[0] = i * 10 + e.rank;
            h->barrier(0);
            for (int r = 0; r < e.world; ++r) {
              OPREG_CHILD_CHECK(static_cast<int32_t*>(h->buffer_ptr(r))[0] == i * 10 + r);
            }
            h->barrier(0);
          }
          // Ring of put/wait signals on channel 3.
          const int next = (e.rank + 1) % e.world, prev = (e.rank + e.world - 1) % e.world;
          for (int i = 0; i < 500; ++i) {
            h->put_signal(next, 3);
            h->wait_signal(prev, 3);
          }
          // Pads are back to zero.
          for (size_t k = 0; k < h->signal_pad_size() / 4; ++k)
            OPREG_CHILD_CHECK(h->signal_pad(e.rank)[k] == 0);
        },
        // A stuck barrier fails its own 5 s wait (exit code 2); the watchdog only bounds the
        // whole run, which with 3 ranks on a 2-core runner busy with other tests has taken
        // more than 25 s (CI, 2026-11-27): it is generous so that load is not a failure.
        Opts(5000), /*check_clean=*/true, /*watchdog_s=*/180);
    RequireAllZero(codes);
  }
}

TEST_CASE("Two channels used at once by two threads") {
  auto codes = RunRanks(
      2,
      [&](RankEnv& e) {
        Tensor t = sm::empty({2}, DType::kInt64, "g");
        auto h = sm::Rendezvous(t);
        std::atomic<bool> ok{true};
        auto worker = [&](int ch) {
          try {
            int64_t* slot = t.data_ptr<int64_t>() + (ch - 1);
            for (int i = 0; i < 2000; ++i) {
              *slot = i * 2 + e.rank;
              h->barrier(ch);
              const int peer = 1 - e.rank;
              if (static_cast<int64_t*>(h->buffer_ptr(peer))[ch - 1] != i * 2 + peer) ok = false;
              h->barrier(ch);
            }
          } catch (const std::exception& ex) {
            std::fprintf(stderr, "channel %d: %s\n", ch, ex.what());
            ok = false;
          }
        };
        std::thread a(worker, 1), b(worker, 2);
        a.join();
        b.join();
        OPREG_CHILD_CHECK(ok.load());
      },
      Opts(5000));
  RequireAllZero(codes);
}

TEST_CASE("Allocation drift is detected at rendezvous") {
  auto codes = RunRanks(
      2,
      [&](RankEnv& e) {
        Tensor ok = sm::empty({16}, DType::kFloat32, "g");  // allocation #0 matches
        try {
          sm::empty({e.rank == 0 ? 2048 : 1024}, DType::kFloat32, "g");
          OPREG_CHILD_CHECK(false);
        } catch (const opreg::Error& err) {
          const std::string msg = err.what();
          if (msg.find("rank 1 allocated 4096 bytes as allocation #1 but rank 0 allocated 8192") ==
              std::string::npos) {
            std::fprintf(stderr, "unexpected message: %s\n", msg.c_str());
            OPREG_CHILD_CHECK(false);
          }
        }
      },
      Opts(3000));
  RequireAllZero(codes);
}

TEST_CASE("A dead peer or a skipped collective is a timeout error, not a hang") {
  SECTION("rank exits") {
    auto codes = RunRanks(
        3,
        [&](RankEnv& e) {
          Tensor x = sm::empty({100}, DType::kFloat32, "g");
          if (e.rank == 2) _exit(0);  // dies without taking part
          Tensor out = opreg::empty({100}, DType::kFloat32);
          const auto t0 = Clock::now();
          try {
            sm::host::one_shot_all_reduce_out(x, "sum", "g", out);
            OPREG_CHILD_CHECK(false);
          } catch (const opreg::Error& err) {
            const std::string msg = err.what();
            OPREG_CHILD_CHECK(msg.find("timed out after 1000 ms") != std::string::npos);
            OPREG_CHILD_CHECK(msg.find("rank 2") != std::string::npos);
          }
          OPREG_CHILD_CHECK(Clock::now() - t0 < std::chrono::milliseconds(3500));
          _exit(0);  // the group cannot be torn down cleanly without rank 2
        },
        Opts(1000), /*check_clean=*/false);
    RequireAllZero(codes);
  }
  SECTION("rank skips an op") {
    auto codes = RunRanks(
        2,
        [&](RankEnv& e) {
          Tensor x = sm::empty({100}, DType::kFloat32, "g");
          if (e.rank == 1) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2500));
            _exit(0);
          }
          try {
            sm::host::two_shot_all_reduce_(x, "sum", "g");
            OPREG_CHILD_CHECK(false);
          } catch (const opreg::Error& err) {
            OPREG_CHILD_CHECK(std::string(err.what()).find("rank 1 did not") != std::string::npos);
          }
          _exit(0);
        },
        Opts(1000), /*check_clean=*/false);
    RequireAllZero(codes);
  }
}
