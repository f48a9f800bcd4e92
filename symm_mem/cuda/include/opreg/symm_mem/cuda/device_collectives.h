// Launchers of the CUDA collective kernels over symmetric memory (device code lives in
// src/device_collectives.cu).
//
// Purpose: the algorithms are written once against (peer data pointers, peer signal pads,
// rank, world), exactly like the host ones (symm_mem/collectives.h): every reduction accumulates
// in f32 in rank order 0..world-1 and rounds once to the element type, so every rank gets
// bitwise-identical results (the same bits as a serial CPU reference doing the same). dtypes
// f32, f16, bf16; the reduction is sum. 16-byte vector loads/stores where the operand offset and
// the output are 16-byte aligned (and chunks allow it), scalar code otherwise.
//
// Two launch modes run the same kernels:
//   - real ranks (simulated == false): one launch per rank process on the caller's stream,
//     rank = args.rank;
//   - simulated ranks (simulated == true): all `world` ranks' buffers live in one process's
//     device memory and ONE cooperative launch (cudaLaunchCooperativeKernel, grid.y = world,
//     rank = blockIdx.y) runs every rank, so the blocks that wait on each other are co-resident.
//
// Synchronization (PyTorch's sync_remote_blocks, CAS protocol): block b of rank r signals peer p
// by CAS(0 -> 1) on pads[p][b * world + r] (system scope, after a system fence) and waits with
// CAS(1 -> 0) on pads[r][b * world + p], so every slot is 0 again after each barrier. Each kernel
// runs a barrier before reading peers and one after (peers may reuse their buffers). The grid
// size is a function of (numel, dtype, world) only, so every rank launches the same grid. A wait
// longer than `timeout_ns` (%globaltimer) prints the rank, block and peer and executes __trap():
// the launch fails with a sticky CUDA error instead of hanging; the pads are then undefined.
//
// Errors: LaunchCollective throws opreg::Error (kValue for bad arguments, kType for a dtype
// other than f32/f16/bf16, kRuntime for CUDA launch errors naming the call). Kernel-time errors
// (the timeout trap) surface at the next synchronizing CUDA call.
//
// Ownership: nothing is retained; every pointer must stay valid until the kernel completes.
// Thread safety: reentrant; collectives that share pads must be issued in the same order on
// every rank and must not overlap in time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "opreg/core/dtype.h"

struct CUstream_st;  // == cudaStream_t's pointee

namespace opreg::symm_mem::cuda {

// Blocks per rank at most (and signal-pad slots per peer).
inline constexpr int kMaxBlocks = 32;
// Threads per block (also the largest supported world size).
inline constexpr int kThreads = 512;

// Bytes of one rank's signal pad for `world` ranks (kMaxBlocks * world uint32 slots, rounded up
// to 128 bytes, so data that follows a pad stays 16-byte aligned).
size_t SignalPadBytes(int world);

enum class Collective {
  kOneShotAllReduce,  // out = sum over ranks of operand
  kTwoShotAllReduce,  // operand (every rank's) = sum over ranks of operand, in place
  kAllGather,         // out[r * numel + i] = rank r's operand[i]
  kReduceScatter,     // out = elements [rank * numel / world, (rank + 1) * numel / world) of sum
};

struct CollectiveArgs {
  Collective kind = Collective::kOneShotAllReduce;
  DType dtype = DType::kFloat32;
  // Device arrays of `world` entries: each rank's data region (16-byte aligned) and signal pad
  // (SignalPadBytes(world) bytes, zero between collectives), as addressable by this device.
  void* const* buffers = nullptr;
  uint32_t* const* pads = nullptr;
  size_t offset = 0;    // bytes from each data region's start to the operand
  int64_t numel = 0;    // operand elements (every rank the same)
  void* out = nullptr;  // this rank's output (unused by kTwoShotAllReduce)
  // Simulated mode: bytes between consecutive virtual ranks' outputs (rank r writes to
  // out + r * out_rank_stride). Ignored for real ranks.
  size_t out_rank_stride = 0;
  int rank = 0;  // real ranks: this process's rank
  int world = 1;
  bool simulated = false;
  uint64_t timeout_ns = 30ull * 1000 * 1000 * 1000;
  CUstream_st* stream = nullptr;
};

// Validates `a` and launches the collective on a.stream (asynchronous).
void LaunchCollective(const CollectiveArgs& a);

}  // namespace opreg::symm_mem::cuda
