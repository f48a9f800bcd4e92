// W simulated ranks on one GPU: the CUDA collective kernels run for every rank at once.
//
// Purpose: testing (and timing, reported as "simulated") the device algorithms of
// device_collectives.h on a single GPU. All `world` virtual ranks' signal pads and data regions
// live in ONE device allocation of this process; each collective is ONE cooperative launch
// (cudaLaunchCooperativeKernel, grid.y = world) running the same kernel as a real rank, so the
// blocks that wait on each other are guaranteed co-resident (separate per-rank launches could
// serialize and deadlock).
//
// Layout: [pad 0 | ... | pad W-1 | tables | data 0 | ... | data W-1], every data region
// 256-byte aligned and buffer_stride() bytes apart; pads zeroed at construction.
//
// Errors: opreg::Error. kValue for bad arguments (world outside [1, 512], more ranks than the
// device can hold co-resident blocks for; an out of the wrong size is the caller's business:
// outs are raw device pointers); kRuntime naming the CUDA call that failed (allocation,
// cooperative launch not supported). A kernel-side timeout traps (see device_collectives.h) and surfaces at the next
// synchronizing call.
//
// Ownership: owns the device allocation (freed by the destructor, after synchronizing the
// device). Out pointers are the caller's. Thread safety: none; one collective at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "opreg/core/dtype.h"
#include "opreg/symm_mem/cuda/device_collectives.h"

namespace opreg::symm_mem::cuda {

class SimulatedRanks {
 public:
  // Allocates the pads and `buffer_bytes` of data per rank on the current device.
  SimulatedRanks(int world, size_t buffer_bytes,
                 std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));
  ~SimulatedRanks();
  SimulatedRanks(const SimulatedRanks&) = delete;
  SimulatedRanks& operator=(const SimulatedRanks&) = delete;

  int world() const { return world_; }
  int device() const { return device_; }
  // Device address of virtual rank `rank`'s data region (kIndex error outside [0, world)).
  void* buffer(int rank) const;
  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t buffer_stride() const { return stride_; }

  // Each rank's operand is the first `numel` elements of its data region. Outputs: rank r
  // writes to out + r * out_stride (bytes). All launches are asynchronous on `stream`.
  void OneShotAllReduce(DType dtype, int64_t numel, void* out, size_t out_stride,
                        CUstream_st* stream = nullptr);
  void TwoShotAllReduce(DType dtype, int64_t numel, CUstream_st* stream = nullptr);
  void AllGather(DType dtype, int64_t numel, void* out, size_t out_stride,
                 CUstream_st* stream = nullptr);
  void ReduceScatter(DType dtype, int64_t numel, void* out, size_t out_stride,
                     CUstream_st* stream = nullptr);

 private:
  void Run(Collective kind, DType dtype, int64_t numel, void* out, size_t out_stride,
           CUstream_st* stream);

  int world_;
  int device_ = 0;
  size_t buffer_bytes_;
  size_t pad_bytes_;
  size_t stride_;
  uint64_t timeout_ns_;
  char* base_ = nullptr;  // the one allocation
  void** tables_ = nullptr;
  char* data_ = nullptr;
};

}  // namespace opreg::symm_mem::cuda
