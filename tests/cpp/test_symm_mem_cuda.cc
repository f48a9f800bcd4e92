// The CUDA VMM symmetric-memory backend with real rank processes: W = 2 forked ranks (device
// rank % device count, so two ranks share the GPU on a one-GPU machine: correctness only) build
// a CudaGroup over a FileStore, allocate symmetric CUDA tensors (cuMemCreate blocks exchanged as
// fds and mapped by every rank) and call the `symm_mem` ops through the dispatcher, which picks
// the CUDA kernels. Results are compared bitwise with a serial reference (f32 accumulation in
// rank order); the fused op is compared bitwise with opreg::fused_add_rms_norm_ on CUDA applied
// to the reference sum. Also: allocation drift is an error on every rank.
//
// CUDA must not be initialized in the parent before fork, so the device probe runs in a forked
// child too. Every test is tagged [cuda]. Without a usable CUDA device (a build without CUDA, no
// driver, no GPU: any error from cudaGetDeviceCount) each test WARNs "SKIPPED: no CUDA device
// (<reason>)" and returns, so the suite passes on machines without a GPU.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cuda_test_util.h"
#include "fork_ranks.h"
#include "opreg/core/allocator.h"
#include "opreg/core/half.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/dispatcher.h"
#include "opreg/ops/ops.h"
#include "opreg/symm_mem/cuda/cuda_group.h"
#include "opreg/symm_mem/store.h"

#if defined(OPREG_TEST_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace {

namespace smc = opreg::symm_mem::cuda;
using opreg::Device;
using opreg::DType;
using opreg::IValue;
using opreg::Tensor;
using Clock = std::chrono::steady_clock;

// Probes CUDA in a child process: "" when a device is usable, else the reason.
std::string ProbeInChild() {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    const std::string reason = opreg::CudaAvailable() ? "" : opreg_test::NoCudaReason();
    (void)!write(fds[1], reason.data(), reason.size());
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string reason;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) reason.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the CUDA probe process crashed";
  return reason;
}

// The parent must not initialize CUDA before it forks the ranks (a CUDA context does not survive
// fork), so these tests probe for a device in a child process instead of OPREG_SKIP_WITHOUT_CUDA.
#define OPREG_SKIP_WITHOUT_CUDA_FORK_SAFE()                       \
  do {                                                            \
    const std::string no_cuda_reason = ProbeInChild();            \
    if (!no_cuda_reason.empty()) {                                \
      WARN("SKIPPED: no CUDA device (" << no_cuda_reason << ")"); \
      return;                                                     \
    }                                                             \
  } while (false)

struct RankEnv {
  int rank;
  int world;
  int device;
  std::shared_ptr<smc::CudaGroup> group;
};

// Forks `world` ranks running `body` inside CUDA group "g" over a fresh FileStore; returns their
// exit codes (99: killed by the watchdog).
std::vector<int> RunRanks(int world, const std::function<void(RankEnv&)>& body,
                          int watchdog_s = 120) {
  char tmpl[] = "/tmp/opreg_symm_cuda_test_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::vector<int> codes = opreg_test::ForkRanks(
      world,
      [&](int r) {
        RankEnv env{r, world, 0, nullptr};
        env.device = r % opreg::CudaDeviceCount();
        smc::CudaGroupOptions opts;
        opts.device = env.device;
        opts.timeout = std::chrono::milliseconds(30000);
        env.group = smc::CudaGroup::Create("g", r, world,
                                           std::make_shared<opreg::symm_mem::FileStore>(dir), opts);
        body(env);
        env.group.reset();
        smc::CudaGroup::Destroy("g");
        return 0;
      },
      watchdog_s);
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        unlink((dir + "/" + e->d_name).c_str());
      }
    }
    closedir(d);
  }
  rmdir(dir.c_str());
  return codes;
}

// Synchronous copy between host and device memory (cudaMemcpy, cudaMemcpyDefault); throws on
// failure (a rank process then exits non-zero).
void Copy(void* dst, const void* src, size_t n) {
#if defined(OPREG_TEST_HAVE_CUDA)
  const cudaError_t err = cudaMemcpy(dst, src, n, cudaMemcpyDefault);
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("cudaMemcpy: ") + cudaGetErrorName(err));
  }
#else
  throw std::runtime_error("no CUDA in this build");
#endif
}

// Rank r's input: deterministic in (seed, r), so every rank can compute every rank's input.
template <class T>
std::vector<T> RankInput(int64_t n, uint64_t seed, int r) {
  std::mt19937 gen(static_cast<uint32_t>(seed * 131 + r));
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(T(dist(gen)));
  return v;
}

template <class T>
std::vector<T> SerialSum(int64_t n, uint64_t seed, int world) {
  std::vector<std::vector<T>> in;
  for (int r = 0; r < world; ++r) in.push_back(RankInput<T>(n, seed, r));
  std::vector<T> out;
  for (int64_t i = 0; i < n; ++i) {
    float acc = static_cast<float>(in[0][i]);
    for (int r = 1; r < world; ++r) acc += static_cast<float>(in[r][i]);
    out.push_back(T(acc));
  }
  return out;
}

template <class T>
void Upload(const Tensor& t, const std::vector<T>& v) {
  Copy(t.data_ptr(), v.data(), v.size() * sizeof(T));
}

template <class T>
bool BitsEqual(const Tensor& t, const T* ref, int64_t n) {
  std::vector<T> got(static_cast<size_t>(n));
  Copy(got.data(), t.data_ptr(), got.size() * sizeof(T));  // synchronizes
  return std::memcmp(got.data(), ref, got.size() * sizeof(T)) == 0;
}

template <class T>
void CollectivesBody(RankEnv& e, DType dtype, uint64_t seed0) {
  const int w = e.world;
  const int me = e.rank;
  const Device dev = Device::cuda(e.device);
  auto& disp = opreg::Dispatcher::Get();
  auto one_shot_out = disp.FindOpOrThrow("symm_mem::one_shot_all_reduce_out");
  auto two_shot = disp.FindOpOrThrow("symm_mem::two_shot_all_reduce_");
  auto all_gather = disp.FindOpOrThrow("symm_mem::all_gather_out");
  auto reduce_scatter = disp.FindOpOrThrow("symm_mem::reduce_scatter_out");
  auto fused = disp.FindOpOrThrow("symm_mem::fused_all_reduce_add_rms_norm_");
  std::mt19937 rng(static_cast<uint32_t>(seed0));  // the same sequence on every rank
  for (int iter = 0; iter < 3; ++iter) {
    const uint64_t seed = seed0 * 100 + iter;
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 4);
    const int64_t cols = 1 + static_cast<int64_t>(rng() % 700);  // odd tails included
    const int64_t n = rows * cols;
    Tensor x = smc::empty({rows, cols}, dtype, "g");
    OPREG_CHILD_CHECK(smc::IsSymmetric(x) && x.is_cuda());
    const std::vector<T> mine = RankInput<T>(n, seed, me);
    const std::vector<T> ref = SerialSum<T>(n, seed, w);

    Upload(x, mine);
    Tensor out = opreg::empty({rows, cols}, dtype, dev);
    one_shot_out.CallBoxed({IValue(x), IValue("sum"), IValue("g")}, {{"out", IValue(out)}});
    OPREG_CHILD_CHECK(BitsEqual<T>(out, ref.data(), n));

    two_shot.CallBoxed({IValue(x), IValue("sum"), IValue("g")});
    OPREG_CHILD_CHECK(BitsEqual<T>(x, ref.data(), n));

    Upload(x, mine);
    Tensor gathered = opreg::empty({rows * w, cols}, dtype, dev);
    all_gather.CallBoxed({IValue(x), IValue("g")}, {{"out", IValue(gathered)}});
    std::vector<T> gref;
    for (int r = 0; r < w; ++r) {
      const std::vector<T> in = RankInput<T>(n, seed, r);
      gref.insert(gref.end(), in.begin(), in.end());
    }
    OPREG_CHILD_CHECK(BitsEqual<T>(gathered, gref.data(), n * w));

    Tensor rs_in = smc::empty({w * rows, cols}, dtype, "g");
    Upload(rs_in, RankInput<T>(n * w, seed + 7, me));
    const std::vector<T> rs_ref = SerialSum<T>(n * w, seed + 7, w);
    Tensor rs_out = opreg::empty({rows, cols}, dtype, dev);
    reduce_scatter.CallBoxed({IValue(rs_in), IValue("sum"), IValue("g")},
                             {{"out", IValue(rs_out)}});
    OPREG_CHILD_CHECK(BitsEqual<T>(rs_out, rs_ref.data() + me * n, n));

    // Fused: the same bits as opreg::fused_add_rms_norm_ (CUDA) on the reference sum.
    Upload(x, mine);
    const std::vector<T> res_host = RankInput<T>(n, seed + 13, 0);
    const std::vector<T> w_host = RankInput<T>(cols, seed + 17, 0);
    Tensor residual = opreg::empty({rows, cols}, dtype, dev);
    Tensor weight = opreg::empty({cols}, dtype, dev);
    Tensor ref_in = opreg::empty({rows, cols}, dtype, dev);
    Tensor ref_res = opreg::empty({rows, cols}, dtype, dev);
    Upload(residual, res_host);
    Upload(ref_res, res_host);
    Upload(weight, w_host);
    Upload(ref_in, ref);
    opreg::ops::fused_add_rms_norm_(ref_in, ref_res, weight, 1e-6);
    fused.CallBoxed({IValue(x), IValue(residual), IValue(weight), IValue(1e-6), IValue("g")});
    std::vector<T> a(static_cast<size_t>(n));
    Copy(a.data(), ref_in.data_ptr(), n * sizeof(T));
    OPREG_CHILD_CHECK(BitsEqual<T>(x, a.data(), n));
    Copy(a.data(), ref_res.data_ptr(), n * sizeof(T));
    OPREG_CHILD_CHECK(BitsEqual<T>(residual, a.data(), n));

    // Scalar paths: an operand one element past its allocation's start (a symmetric offset that
    // is not 16-byte aligned, the same on every rank), so the kernels take the element-wise code
    // and two-shot splits into unrounded chunks.
    Tensor big = smc::empty({n + 1}, dtype, "g");
    Tensor xv = big.narrow(0, 1, n).view({rows, cols});
    OPREG_CHILD_CHECK(smc::IsSymmetric(xv));
    Upload(xv, mine);
    Tensor out2 = opreg::empty({rows, cols}, dtype, dev);
    one_shot_out.CallBoxed({IValue(xv), IValue("sum"), IValue("g")}, {{"out", IValue(out2)}});
    OPREG_CHILD_CHECK(BitsEqual<T>(out2, ref.data(), n));
    two_shot.CallBoxed({IValue(xv), IValue("sum"), IValue("g")});
    OPREG_CHILD_CHECK(BitsEqual<T>(xv, ref.data(), n));
  }
}

}  // namespace

TEST_CASE("cuda vmm backend: collectives across 2 rank processes, bitwise", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA_FORK_SAFE();
  const std::vector<int> codes = RunRanks(2, [](RankEnv& e) {
    CollectivesBody<float>(e, DType::kFloat32, 1);
    CollectivesBody<opreg::Half>(e, DType::kFloat16, 2);
    CollectivesBody<opreg::BFloat16>(e, DType::kBFloat16, 3);
  });
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("cuda vmm backend: allocation drift is an error on every rank", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA_FORK_SAFE();
  const std::vector<int> codes = RunRanks(2, [](RankEnv& e) {
    Tensor ok = smc::empty({64}, DType::kFloat32, "g");
    try {
      Tensor bad = smc::empty({e.rank == 0 ? 64 : 128}, DType::kFloat32, "g");
      OPREG_CHILD_CHECK(false);
    } catch (const opreg::Error& err) {
      OPREG_CHILD_CHECK(std::string(err.what()).find("allocation drift in group 'g'") !=
                        std::string::npos);
    }
  });
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("cuda vmm backend: argument errors name the op and argument", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA_FORK_SAFE();
  const std::vector<int> codes = RunRanks(1, [](RankEnv& e) {
    auto op = opreg::Dispatcher::Get().FindOpOrThrow("symm_mem::two_shot_all_reduce_");
    Tensor plain = opreg::empty({8}, DType::kFloat32, Device::cuda(e.device));
    try {
      op.CallBoxed({IValue(plain), IValue("sum"), IValue("g")});
      OPREG_CHILD_CHECK(false);
    } catch (const opreg::Error& err) {
      OPREG_CHILD_CHECK(std::string(err.what())
                            .find("[symm_mem::two_shot_all_reduce_] argument "
                                  "'input' (#0)") != std::string::npos);
    }
  });
  CHECK(codes == std::vector<int>{0});
}

TEST_CASE("cuda vmm backend: the symm_mem ops have CUDA kernels", "[cuda]") {
  // Needs no device: loading libopreg_symm_mem_cuda registered them (and checked their C++
  // signatures against the schemas).
#if defined(OPREG_TEST_HAVE_CUDA)
  for (const char* op : {"symm_mem::one_shot_all_reduce_out", "symm_mem::two_shot_all_reduce_",
                         "symm_mem::all_gather_out", "symm_mem::reduce_scatter_out",
                         "symm_mem::fused_all_reduce_add_rms_norm_"}) {
    const auto dump = opreg::Dispatcher::Get().DumpOp(op);
    REQUIRE(dump.ok());
    INFO(*dump);
    CHECK(dump->find("register_cuda_ops.cc") != std::string::npos);
  }
#else
  WARN("SKIPPED: opreg was built without CUDA (OPREG_BUILD_CUDA=OFF)");
#endif
}
