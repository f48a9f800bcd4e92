// The MPI bootstrap of symm_mem (MpiStore, CreateMpiGroup), run by ctest under
// `mpirun -np 2` and `-np 3` (tests/cpp/symm_mem_tests.cmake). Every rank runs every test case
// in the same order, so each TEST_CASE is collective; timeouts are short so that a rank that
// fails (or skips a step) makes the others fail fast instead of hanging. The exit status is
// the worst over the ranks.
//
//   test_symm_mem_mpi [catch args]          MPI_THREAD_MULTIPLE, the tests below
//   test_symm_mem_mpi --mpi-single [...]    MPI_THREAD_SINGLE, only the [thread_level] case
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/symm_mem/collectives.h"
#include "opreg/symm_mem/mpi_store.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace sm = opreg::symm_mem;
using opreg::DType;
using opreg::Tensor;
using Clock = std::chrono::steady_clock;

namespace {

bool g_single = false;  // MPI was initialized with MPI_THREAD_SINGLE (--mpi-single)

int Rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int World() {
  int w = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &w);
  return w;
}

// Every rank's `v`, in rank order.
std::vector<int64_t> AllGather(int64_t v) {
  std::vector<int64_t> out(static_cast<size_t>(World()));
  MPI_Allgather(&v, 1, MPI_INT64_T, out.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  return out;
}

sm::MpiStoreOptions FastShutdown() {
  sm::MpiStoreOptions o;
  o.shutdown_timeout = sm::Millis(10000);
  return o;
}

// A deterministic, rank-dependent value with a full mantissa (so the summation order matters).
float Value(int rank, int64_t i) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ static_cast<uint32_t>(rank + 1) * 40503u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (static_cast<float>(h & 0xFFFFFF) / 16777216.0f - 0.5f) * (1.0f + 0.37f * rank);
}

}  // namespace

TEST_CASE("MpiStore: Set, Get, TryGet, Add, Delete across ranks", "[store]") {
  const int me = Rank(), w = World();
  sm::MpiStore store(MPI_COMM_WORLD, FastShutdown());
  CHECK(store.rank() == me);
  CHECK(store.world_size() == w);
  CHECK(store.root() == 0);

  // Values are bytes (NUL included); keys any string.
  const std::string mine = std::string("v\0", 2) + std::to_string(me) + "\xff";
  store.Set("key/" + std::to_string(me), mine);
  store.Set("dup", "first");  // overwritten below by whoever comes last: both are values
  for (int r = 0; r < w; ++r) {
    const std::string expect = std::string("v\0", 2) + std::to_string(r) + "\xff";
    CHECK(store.Get("key/" + std::to_string(r), sm::Millis(5000)) == expect);
  }
  std::string v;
  CHECK_FALSE(store.TryGet("no such key", &v));
  CHECK(store.TryGet("key/0", &v));
  CHECK(v == std::string("v\0", 2) + "0\xff");

  // A 1 MiB value crosses MPI's eager limit (rendezvous protocol both ways).
  std::string big(size_t{1} << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + me);
  store.Set("big/" + std::to_string(me), big);
  const int peer = (me + 1) % w;
  const std::string got = store.Get("big/" + std::to_string(peer), sm::Millis(5000));
  REQUIRE(got.size() == big.size());
  for (size_t i = 0; i < got.size(); i += 4097) CHECK(got[i] == static_cast<char>(i * 7 + peer));

  // Add is atomic: the returned values are distinct and the last one is the total.
  const int64_t mine_after = store.Add("counter", me + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t total = int64_t{w} * (w + 1) / 2;
  CHECK(store.Add("counter", 0) == total);
  CHECK(store.Get("counter", sm::Millis(100)) == std::to_string(total));  // decimal text
  std::vector<int64_t> after = AllGather(mine_after);
  std::sort(after.begin(), after.end());
  CHECK(std::unique(after.begin(), after.end()) == after.end());
  CHECK(after.back() == total);
  const int64_t neg = store.Add("negative", -5);  // a new counter starts from 0
  CHECK((neg % 5 == 0 && neg <= -5 && neg >= -5 * w));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(store.Add("negative", 0) == -5 * w);

  // Delete (of a missing key too) is not an error; the key is gone for everyone.
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == w - 1) {
    store.Delete("key/0");
    store.Delete("never existed");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_FALSE(store.TryGet("key/0", &v));

  // Get waits for a key set later (by the last rank, after 150 ms).
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = Clock::now();
  if (me == w - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    store.Set("late", "here");
  }
  CHECK(store.Get("late", sm::Millis(10000)) == "here");
  if (me != w - 1) CHECK(Clock::now() - t0 >= std::chrono::milliseconds(100));
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("MpiStore: Get times out with an error naming the key", "[store][errors]") {
  sm::MpiStore store(MPI_COMM_WORLD, FastShutdown());
  const auto t0 = Clock::now();
  try {
    store.Get("missing/key", sm::Millis(200));
    FAIL("Get of a key nobody sets did not time out");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kRuntime);
    const std::string m = e.what();
    CHECK(m.find("timed out after 200 ms") != std::string::npos);
    CHECK(m.find("'missing/key'") != std::string::npos);
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  CHECK(ms >= 150);
  CHECK(ms < 5000);
  // Zero timeout: an immediate answer either way.
  CHECK_THROWS_AS(store.Get("missing/key", sm::Millis(0)), opreg::Error);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("MpiStore: many threads per rank", "[store][threads]") {
  const int w = World();
  sm::MpiStore store(MPI_COMM_WORLD, FastShutdown());
  constexpr int kThreads = 4, kAdds = 50;
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < kAdds; ++i) store.Add("threads", 1);
        store.Set("t/" + std::to_string(Rank()) + "/" + std::to_string(t), "x");
      } catch (const std::exception&) {
        ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(store.Add("threads", 0) == int64_t{w} * kThreads * kAdds);
  for (int r = 0; r < w; ++r) {
    for (int t = 0; t < kThreads; ++t) {
      CHECK(store.Get("t/" + std::to_string(r) + "/" + std::to_string(t), sm::Millis(2000)) ==
            "x");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("MpiStore: errors of construction and use after Shutdown", "[store][errors]") {
  const int w = World();
  sm::MpiStoreOptions bad;
  bad.root = w;  // checked before the (collective) duplication: every rank throws the same
  try {
    sm::MpiStore s(MPI_COMM_WORLD, bad);
    FAIL("root outside the communicator accepted");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kValue);
    CHECK(std::string(e.what()).find("root " + std::to_string(w) + " is not in [0, ") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(sm::MpiStore(MPI_COMM_NULL), opreg::Error);

  // A non-zero root works like any other.
  sm::MpiStoreOptions last;
  last.root = w - 1;
  sm::MpiStore store(MPI_COMM_WORLD, last);
  CHECK(store.Add("n", 1) >= 1);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(store.Add("n", 0) == w);
  store.Shutdown(sm::Millis(10000));
  CHECK(store.shut_down());
  store.Shutdown(sm::Millis(10000));  // idempotent
  try {
    store.Set("k", "v");
    FAIL("Set after Shutdown accepted");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kRuntime);
    CHECK(std::string(e.what()).find("Set after Shutdown") != std::string::npos);
  }
  std::string v;
  CHECK_THROWS_AS(store.TryGet("k", &v), opreg::Error);
  CHECK_THROWS_AS(store.Get("k", sm::Millis(1)), opreg::Error);
  CHECK_THROWS_AS(store.Add("k", 1), opreg::Error);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("CreateMpiGroup: all-reduce bitwise equal to a serial reference", "[group]") {
  const int me = Rank(), w = World();
  sm::GroupOptions opts;
  opts.heap_bytes = size_t{8} << 20;
  opts.timeout = sm::Millis(5000);
  std::shared_ptr<sm::MpiStore> store;
  {
    std::shared_ptr<sm::Group> g = sm::CreateMpiGroup("mpi_tp", MPI_COMM_WORLD, opts, &store);
    REQUIRE(store != nullptr);
    CHECK(g->name() == "mpi_tp");
    CHECK(g->rank() == me);
    CHECK(g->world_size() == w);
    CHECK(&g->store() == store.get());

    // Odd sizes: chunks of unequal length in the two-shot split.
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{12347}, int64_t{100003}}) {
      Tensor x = sm::empty({n}, DType::kFloat32, "mpi_tp");
      Tensor out = opreg::empty({n}, DType::kFloat32);
      float* px = x.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i) px[i] = Value(me, i);
      std::vector<float> ref(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        float acc = Value(0, i);
        for (int r = 1; r < w; ++r) acc += Value(r, i);
        ref[static_cast<size_t>(i)] = acc;
      }
      sm::host::one_shot_all_reduce_out(x, "sum", "mpi_tp", out);
      CHECK(std::memcmp(out.data_ptr(), ref.data(), static_cast<size_t>(n) * 4) == 0);
      sm::host::two_shot_all_reduce_(x, "sum", "mpi_tp");
      CHECK(std::memcmp(x.data_ptr(), ref.data(), static_cast<size_t>(n) * 4) == 0);
    }

    // bf16: accumulated in f32 in rank order, rounded once.
    const int64_t n = 4099;
    Tensor x = sm::empty({n}, DType::kBFloat16, "mpi_tp");
    Tensor out = opreg::empty({n}, DType::kBFloat16);
    auto* px = static_cast<opreg::BFloat16*>(x.data_ptr());
    for (int64_t i = 0; i < n; ++i) px[i] = opreg::BFloat16(Value(me, i));
    sm::host::one_shot_all_reduce_out(x, "sum", "mpi_tp", out);
    const auto* po = static_cast<const opreg::BFloat16*>(out.data_ptr());
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      float acc = static_cast<float>(opreg::BFloat16(Value(0, i)));
      for (int r = 1; r < w; ++r) acc += static_cast<float>(opreg::BFloat16(Value(r, i)));
      const opreg::BFloat16 want(acc);
      bad += std::memcmp(&want, &po[i], sizeof(want)) != 0;
    }
    CHECK(bad == 0);

    // Every rank holds the same bits: compare a hash of the result across ranks.
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits;
      std::memcpy(&bits, &po[i], 2);
      h = (h ^ bits) * 1099511628211ull;
    }
    std::vector<int64_t> hashes = AllGather(static_cast<int64_t>(h));
    CHECK(std::count(hashes.begin(), hashes.end(), hashes[0]) == w);
  }
  sm::Group::Destroy("mpi_tp");
  store->Shutdown(sm::Millis(10000));
  CHECK_FALSE(sm::Group::Exists("mpi_tp"));
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("CreateMpiGroup: back-to-back collectives with stalled ranks", "[group][sync]") {
  // Rank stalls (longer than the barrier's spin + yield phases) push the waits onto the futex
  // path; results must stay exact and every slot must be back at rest afterwards.
  const int me = Rank(), w = World();
  sm::GroupOptions opts;
  opts.heap_bytes = size_t{2} << 20;
  opts.timeout = sm::Millis(5000);
  std::shared_ptr<sm::MpiStore> store;
  {
    std::shared_ptr<sm::Group> g = sm::CreateMpiGroup("mpi_sync", MPI_COMM_WORLD, opts, &store);
    const int64_t n = 777;
    Tensor x = sm::empty({n}, DType::kFloat32, "mpi_sync");
    Tensor out = opreg::empty({n}, DType::kFloat32);
    int bad = 0;
    for (int it = 0; it < 400; ++it) {
      float* px = x.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i) px[i] = static_cast<float>(me + 1) * (i + it);
      if (it % 40 == me) std::this_thread::sleep_for(std::chrono::milliseconds(4));
      sm::host::one_shot_all_reduce_out(x, "sum", "mpi_sync", out);
      const float scale = static_cast<float>(w * (w + 1) / 2);
      for (int64_t i = 0; i < n; ++i) bad += out.data_ptr<float>()[i] != scale * (i + it);
      if (it % 40 == (me + 1) % w) std::this_thread::sleep_for(std::chrono::milliseconds(4));
      sm::host::two_shot_all_reduce_(x, "sum", "mpi_sync");
      for (int64_t i = 0; i < n; ++i) bad += px[i] != scale * (i + it);
    }
    CHECK(bad == 0);
    // At rest every slot of channel 0 is 0: SymmetricMemory's own barrier works right after.
    std::shared_ptr<sm::SymmetricMemory> h = sm::Rendezvous(x);
    h->barrier(0, sm::Millis(5000));
    for (int r = 0; r < w; ++r) CHECK(h->signal_pad(me)[r] == 0u);
  }
  sm::Group::Destroy("mpi_sync");
  store->Shutdown(sm::Millis(10000));
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("CreateMpiGroup: error paths", "[group][errors]") {
  const int me = Rank(), w = World();
  sm::GroupOptions opts;
  opts.heap_bytes = size_t{1} << 20;
  opts.timeout = sm::Millis(500);
  CHECK_THROWS_AS(sm::CreateMpiGroup("x", MPI_COMM_NULL, opts), opreg::Error);
  {
    std::shared_ptr<sm::Group> g = sm::CreateMpiGroup("mpi_err", MPI_COMM_WORLD, opts);
    // The same name again in this process: kValue, on every rank (before any bootstrap).
    try {
      sm::CreateMpiGroup("mpi_err", MPI_COMM_WORLD, opts);
      FAIL("duplicate group name accepted");
    } catch (const opreg::Error& e) {
      CHECK(e.kind() == opreg::ErrorKind::kValue);
      CHECK(std::string(e.what()).find("already exists") != std::string::npos);
    }
    // A rank that skips a collective: the others fail with the signal timeout, no hang.
    Tensor x = sm::empty({64}, DType::kFloat32, "mpi_err");
    Tensor out = opreg::empty({64}, DType::kFloat32);
    if (me != w - 1) {
      const auto t0 = Clock::now();
      try {
        sm::host::one_shot_all_reduce_out(x, "sum", "mpi_err", out);
        FAIL("all-reduce without the last rank succeeded");
      } catch (const opreg::Error& e) {
        CHECK(e.kind() == opreg::ErrorKind::kRuntime);
        CHECK(std::string(e.what()).find("timed out") != std::string::npos);
      }
      CHECK(Clock::now() - t0 < std::chrono::seconds(5));
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  sm::Group::Destroy("mpi_err");  // its store shuts down with the group (destructor)
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("MpiStore: a store left alive is shut down by MPI_Finalize", "[store]") {
  // Never destroyed: the MPI_COMM_SELF hook stops the service thread inside MPI_Finalize. Held
  // by a static so leak checkers see it reachable.
  static sm::MpiStore* left_alive = new sm::MpiStore(MPI_COMM_WORLD, FastShutdown());
  left_alive->Set("k" + std::to_string(Rank()), "v");
  CHECK(left_alive->Get("k0", sm::Millis(5000)) == "v");
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("MpiStore: MPI without MPI_THREAD_MULTIPLE is a clear error", "[.][thread_level]") {
  REQUIRE(g_single);
  CHECK(sm::MpiThreadLevelName() == "MPI_THREAD_SINGLE");
  try {
    sm::MpiStore s(MPI_COMM_WORLD);
    FAIL("MpiStore accepted MPI_THREAD_SINGLE");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kRuntime);
    const std::string m = e.what();
    CHECK(m.find("needs MPI_THREAD_MULTIPLE") != std::string::npos);
    CHECK(m.find("provides MPI_THREAD_SINGLE") != std::string::npos);
  }
}

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mpi-single") == 0) {
      g_single = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int provided = 0;
  int n = static_cast<int>(args.size());
  char** a = args.data();
  MPI_Init_thread(&n, &a, g_single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
  if (!g_single && provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "test_symm_mem_mpi: MPI provides thread level %d, not "
                 "MPI_THREAD_MULTIPLE\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rc = Catch::Session().run(n, a);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
