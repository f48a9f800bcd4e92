// SimulatedRanks: one allocation for every virtual rank, cooperative launches (see
// simulated_ranks.h).
#include "opreg/symm_mem/cuda/simulated_ranks.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "cuda_check.h"
#include "opreg/core/cuda_device_guard.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"

namespace opreg::symm_mem::cuda {
namespace {
size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }
}  // namespace

SimulatedRanks::SimulatedRanks(int world, size_t buffer_bytes, std::chrono::milliseconds timeout)
    : world_(world),
      buffer_bytes_(buffer_bytes),
      pad_bytes_(0),
      stride_(RoundUp(std::max<size_t>(buffer_bytes, 1), 256)),
      timeout_ns_(static_cast<uint64_t>(timeout.count()) * 1000000) {
  OPREG_CHECK_VALUE(world >= 1 && world <= kThreads, "symm_mem::cuda::SimulatedRanks: world ",
                    world, " is not in [1, ", kThreads, "]");
  pad_bytes_ = SignalPadBytes(world);
  const size_t pads = RoundUp(pad_bytes_ * world, 256);
  const size_t tables = RoundUp(2 * sizeof(void*) * world, 256);
  const size_t total = pads + tables + stride_ * world;
  CheckCudaRt(cudaGetDevice(&device_), "cudaGetDevice");
  void* p = nullptr;
  CheckCudaRt(cudaMalloc(&p, total),
              StrCat("cudaMalloc(", total, " bytes for ", world, " simulated ranks)"));
  base_ = static_cast<char*>(p);
  tables_ = reinterpret_cast<void**>(base_ + pads);
  data_ = base_ + pads + tables;
  std::vector<void*> host(2 * static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    host[r] = data_ + stride_ * r;
    host[world + r] = base_ + pad_bytes_ * r;
  }
  try {
    CheckCudaRt(cudaMemset(base_, 0, pads), "cudaMemset(signal pads)");
    CheckCudaRt(
        cudaMemcpy(tables_, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice),
        "cudaMemcpy(peer-pointer / signal-pad tables)");
  } catch (...) {
    (void)cudaFree(base_);
    throw;
  }
}

SimulatedRanks::~SimulatedRanks() {
  try {  // a destructor must not throw: failures are logged
    CudaDeviceGuard guard(device_);
    const cudaError_t s = cudaDeviceSynchronize();
    const cudaError_t f = cudaFree(base_);
    if (s != cudaSuccess || f != cudaSuccess) {
      (void)cudaGetLastError();
      Logger().warn(
          "symm_mem::cuda::SimulatedRanks: teardown: cudaDeviceSynchronize {}, "
          "cudaFree {}",
          cudaGetErrorName(s), cudaGetErrorName(f));
    }
  } catch (const std::exception& e) {
    Logger().warn("symm_mem::cuda::SimulatedRanks: teardown: {}", e.what());
  }
}

void* SimulatedRanks::buffer(int rank) const {
  OPREG_CHECK_INDEX(rank >= 0 && rank < world_, "SimulatedRanks::buffer: rank ", rank,
                    " is not in [0, ", world_, ")");
  return data_ + stride_ * rank;
}

void SimulatedRanks::Run(Collective kind, DType dtype, int64_t numel, void* out, size_t out_stride,
                         CUstream_st* stream) {
  OPREG_CHECK_VALUE(numel >= 0 && static_cast<size_t>(numel) * ItemSize(dtype) <= buffer_bytes_,
                    "symm_mem::cuda::SimulatedRanks: ", numel, " elements of ", DTypeName(dtype),
                    " do not fit the ", buffer_bytes_, "-byte buffers");
  CollectiveArgs a;
  a.kind = kind;
  a.dtype = dtype;
  a.buffers = tables_;
  a.pads = reinterpret_cast<uint32_t* const*>(tables_ + world_);
  a.numel = numel;
  a.out = out;
  a.out_rank_stride = out_stride;
  a.world = world_;
  a.simulated = true;
  a.timeout_ns = timeout_ns_;
  a.stream = stream;
  CudaDeviceGuard guard(device_);
  LaunchCollective(a);
}

void SimulatedRanks::OneShotAllReduce(DType dtype, int64_t numel, void* out, size_t out_stride,
                                      CUstream_st* stream) {
  Run(Collective::kOneShotAllReduce, dtype, numel, out, out_stride, stream);
}
void SimulatedRanks::TwoShotAllReduce(DType dtype, int64_t numel, CUstream_st* stream) {
  Run(Collective::kTwoShotAllReduce, dtype, numel, nullptr, 0, stream);
}
void SimulatedRanks::AllGather(DType dtype, int64_t numel, void* out, size_t out_stride,
                               CUstream_st* stream) {
  Run(Collective::kAllGather, dtype, numel, out, out_stride, stream);
}
void SimulatedRanks::ReduceScatter(DType dtype, int64_t numel, void* out, size_t out_stride,
                                   CUstream_st* stream) {
  Run(Collective::kReduceScatter, dtype, numel, out, out_stride, stream);
}

}  // namespace opreg::symm_mem::cuda
