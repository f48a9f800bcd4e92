// The CUDA collective kernels with W simulated ranks on one GPU (symm_mem::cuda::SimulatedRanks:
// every rank's buffer in one device allocation, one cooperative launch for all ranks), compared
// bitwise with a serial CPU reference that accumulates in f32 in rank order and rounds once.
// W = 2, 3, 4; f32, f16, bf16; sizes with and without vector tails; repeated calls check that
// the signal pads return to zero (a leftover signal would make the next call hang -> trap).
//
// Every test is tagged [cuda]. Without a usable CUDA device (a build without CUDA, no driver, no
// GPU: any error from cudaGetDeviceCount) each test WARNs "SKIPPED: no CUDA device (<reason>)"
// and returns, so the suite passes on machines without a GPU.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "opreg/core/allocator.h"
#include "opreg/core/half.h"
#include "opreg/symm_mem/cuda/simulated_ranks.h"

#if defined(OPREG_TEST_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace {

namespace smc = opreg::symm_mem::cuda;
using opreg::DType;

void Sync() {
#if defined(OPREG_TEST_HAVE_CUDA)
  const cudaError_t err = cudaDeviceSynchronize();
  INFO("cudaDeviceSynchronize: " << cudaGetErrorName(err));
  REQUIRE(err == cudaSuccess);
#endif
}

// Synchronous copy between host and device memory (cudaMemcpy, cudaMemcpyDefault).
void Copy(void* dst, const void* src, size_t n) {
#if defined(OPREG_TEST_HAVE_CUDA)
  const cudaError_t err = cudaMemcpy(dst, src, n, cudaMemcpyDefault);
  INFO("cudaMemcpy: " << cudaGetErrorName(err));
  REQUIRE(err == cudaSuccess);
#else
  FAIL("no CUDA in this build");
#endif
}

// Fills device memory with 0xff bytes (NaN in f32, f16 and bf16; no sum of finite inputs is NaN),
// so a collective that does not write its output cannot pass on a previous call's result.
void Poison(void* dst, size_t n) {
#if defined(OPREG_TEST_HAVE_CUDA)
  const cudaError_t err = cudaMemset(dst, 0xff, n);
  INFO("cudaMemset: " << cudaGetErrorName(err));
  REQUIRE(err == cudaSuccess);
#else
  FAIL("no CUDA in this build");
#endif
}

// Device scratch memory for outputs.
struct DeviceBuffer {
  explicit DeviceBuffer(size_t n) : bytes(n) {
#if defined(OPREG_TEST_HAVE_CUDA)
    REQUIRE(cudaMalloc(&ptr, n == 0 ? 1 : n) == cudaSuccess);
#endif
  }
  ~DeviceBuffer() {
#if defined(OPREG_TEST_HAVE_CUDA)
    cudaFree(ptr);
#endif
  }
  void* ptr = nullptr;
  size_t bytes;
};

// Host values of one dtype, as raw element bytes, and the serial reference.
template <class T>
struct Ref {
  // inputs[r][i], rounded to T.
  static std::vector<std::vector<T>> Inputs(int world, int64_t numel, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-3.f, 3.f);
    std::vector<std::vector<T>> in(static_cast<size_t>(world));
    for (auto& v : in) {
      for (int64_t i = 0; i < numel; ++i) v.push_back(T(dist(gen)));
    }
    return in;
  }
  // ((float(in[0][i]) + float(in[1][i])) + ...) rounded once to T.
  static std::vector<T> Sum(const std::vector<std::vector<T>>& in) {
    std::vector<T> out;
    for (size_t i = 0; i < in[0].size(); ++i) {
      float acc = static_cast<float>(in[0][i]);
      for (size_t r = 1; r < in.size(); ++r) acc += static_cast<float>(in[r][i]);
      out.push_back(T(acc));
    }
    return out;
  }
};

template <class T>
bool SameBits(const T* a, const T* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(T)) == 0;
}

template <class T>
void Upload(smc::SimulatedRanks& sim, const std::vector<std::vector<T>>& in) {
  for (int r = 0; r < sim.world(); ++r) {
    Copy(sim.buffer(r), in[r].data(), in[r].size() * sizeof(T));
  }
}

template <class T>
std::vector<T> Download(const void* src, size_t n) {
  std::vector<T> v(n);
  Copy(v.data(), src, n * sizeof(T));
  return v;
}

template <class T>
void CheckAll(DType dtype, int world, int64_t numel, uint32_t seed) {
  INFO("dtype " << opreg::DTypeName(dtype) << ", world " << world << ", numel " << numel);
  const size_t n = static_cast<size_t>(numel);
  const auto in = Ref<T>::Inputs(world, numel, seed);
  const std::vector<T> sum = Ref<T>::Sum(in);
  smc::SimulatedRanks sim(world, n * sizeof(T));
  const size_t stride = (n * sizeof(T) + 255) / 256 * 256 + 256;  // per-rank output slot

  // One-shot (twice: the pads must be back to zero after the first call).
  DeviceBuffer out(stride * world * world);
  Upload(sim, in);
  for (int rep = 0; rep < 2; ++rep) {
    Poison(out.ptr, out.bytes);
    sim.OneShotAllReduce(dtype, numel, out.ptr, stride);
    Sync();
    for (int r = 0; r < world; ++r) {
      INFO("one_shot_all_reduce, rep " << rep << ", rank " << r);
      const auto got = Download<T>(static_cast<char*>(out.ptr) + r * stride, n);
      CHECK(SameBits(got.data(), sum.data(), n));
    }
  }

  // Scalar path: outputs one element off 16-byte alignment.
  Poison(out.ptr, out.bytes);
  sim.OneShotAllReduce(dtype, numel, static_cast<char*>(out.ptr) + sizeof(T), stride);
  Sync();
  for (int r = 0; r < world; ++r) {
    INFO("one_shot_all_reduce (unaligned out), rank " << r);
    const auto got = Download<T>(static_cast<char*>(out.ptr) + r * stride + sizeof(T), n);
    CHECK(SameBits(got.data(), sum.data(), n));
  }

  // Reduce-scatter (numel divisible by world: the caller's contract).
  const int64_t rs_numel = numel / world * world;
  if (rs_numel > 0) {
    Poison(out.ptr, out.bytes);
    sim.ReduceScatter(dtype, rs_numel, out.ptr, stride);
    Sync();
    const std::vector<T> rs_sum = Ref<T>::Sum([&] {
      auto cut = in;
      for (auto& v : cut) v.resize(static_cast<size_t>(rs_numel));
      return cut;
    }());
    const size_t chunk = static_cast<size_t>(rs_numel / world);
    for (int r = 0; r < world; ++r) {
      INFO("reduce_scatter, rank " << r);
      const auto got = Download<T>(static_cast<char*>(out.ptr) + r * stride, chunk);
      CHECK(SameBits(got.data(), rs_sum.data() + r * chunk, chunk));
    }
  }

  // All-gather: every rank gets every rank's input, in rank order.
  const size_t ag_stride = stride * world;
  Poison(out.ptr, out.bytes);
  sim.AllGather(dtype, numel, out.ptr, ag_stride);
  Sync();
  for (int r = 0; r < world; ++r) {
    INFO("all_gather, rank " << r);
    const auto got = Download<T>(static_cast<char*>(out.ptr) + r * ag_stride, n * world);
    for (int p = 0; p < world; ++p) CHECK(SameBits(got.data() + p * n, in[p].data(), n));
  }

  // Two-shot in place: every rank's buffer becomes the sum (twice: pads reset).
  for (int rep = 0; rep < 2; ++rep) {
    Upload(sim, in);
    sim.TwoShotAllReduce(dtype, numel);
    Sync();
    for (int r = 0; r < world; ++r) {
      INFO("two_shot_all_reduce_, rep " << rep << ", rank " << r);
      const auto got = Download<T>(sim.buffer(r), n);
      CHECK(SameBits(got.data(), sum.data(), n));
    }
  }
}

const int64_t kSizes[] = {1, 7, 64, 1000, 4099, 65536 + 3};

}  // namespace

TEST_CASE("cuda simulated ranks: collectives equal the serial reference bitwise", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  uint32_t seed = 1;
  for (int world : {2, 3, 4}) {
    for (int64_t numel : kSizes) {
      CheckAll<float>(DType::kFloat32, world, numel, seed++);
      CheckAll<opreg::Half>(DType::kFloat16, world, numel, seed++);
      CheckAll<opreg::BFloat16>(DType::kBFloat16, world, numel, seed++);
    }
  }
}

TEST_CASE("cuda simulated ranks: argument errors", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  CHECK_THROWS_WITH(smc::SimulatedRanks(0, 16), Catch::Contains("world 0 is not in [1, 512]"));
  smc::SimulatedRanks sim(2, 64);
  CHECK_THROWS_WITH(sim.TwoShotAllReduce(DType::kFloat32, 17),
                    Catch::Contains("do not fit the 64-byte buffers"));
  CHECK_THROWS_WITH(sim.TwoShotAllReduce(DType::kInt32, 4),
                    Catch::Contains("expected dtype f32, f16 or bf16, got"));
  DeviceBuffer out(256);
  CHECK_THROWS_WITH(sim.ReduceScatter(DType::kFloat32, 3, out.ptr, 128),
                    Catch::Contains("is not divisible by the world size 2"));
}
