// A symmetric buffer of the NCCL backend (NCCL >= 2.28 windows and device API), and a one-shot
// all-reduce kernel over it.
//
// Purpose: the multi-node-capable symmetric-memory path. Construction is collective over the
// communicator: ncclMemAlloc(bytes) (cuMem-backed), ncclCommWindowRegister(...,
// NCCL_WIN_COLL_SYMMETRIC) -- checked to return a non-null window, which NCCL omits (success,
// null window) when the communicator lacks symmetric support -- and ncclDevCommCreate with
// lsaBarrierCount = kNcclBlocks. OneShotAllReduce launches kNcclBlocks CTAs that meet on LSA
// barrier `blockIdx.x` (ncclLsaBarrierSession, epoch-based, no reset), read every LSA peer's
// buffer with ncclGetLsaPointer in rank order, accumulate in f32, round once, and store to a
// local `out`: every rank gets bitwise-identical results. NCCL's LSA barrier waits have no
// timeout: a peer that never launches hangs the kernel (unlike the CUDA VMM backend).
//
// Errors: opreg::Error. kRuntime naming the NCCL call and ncclGetErrorString's text (and
// ncclGetLastError's detail), or "ncclCommWindowRegister returned a null window"; kValue /
// kType for bad arguments; kNotImplemented in builds without OPREG_BUILD_NCCL (stub).
//
// Ownership: the buffer owns its memory, window and device communicator and releases them in
// its destructor (deregistration is collective in NCCL: destroy buffers in the same order on
// every rank). The communicator is the caller's and must outlive the buffer.
//
// Thread safety: none; use one buffer from one thread (NCCL's rules for a communicator apply).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "opreg/core/dtype.h"

struct ncclComm;     // ncclComm_t's pointee
struct CUstream_st;  // cudaStream_t's pointee

namespace opreg::symm_mem::nccl {

// CTAs of the kernels (and LSA barriers of the device communicator).
inline constexpr int kNcclBlocks = 16;

class NcclSymmetricBuffer {
 public:
  // Collective: allocates and registers `bytes` (> 0) on every rank of `comm`.
  NcclSymmetricBuffer(ncclComm* comm, size_t bytes);
  ~NcclSymmetricBuffer();
  NcclSymmetricBuffer(const NcclSymmetricBuffer&) = delete;
  NcclSymmetricBuffer& operator=(const NcclSymmetricBuffer&) = delete;

  // This rank's buffer (device memory).
  void* data() const;
  size_t bytes() const;
  // Rank and size of this rank's LSA team (ranks reachable by load/store).
  int lsa_rank() const;
  int lsa_size() const;

  // Collective over the LSA team: out[i] = sum over LSA ranks of their data()[i], i < numel
  // (f32, f16 or bf16; out: `numel` elements of device memory, not inside data()). Asynchronous
  // on `stream`.
  void OneShotAllReduce(DType dtype, int64_t numel, void* out, CUstream_st* stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// NCCL's version code (ncclGetVersion, e.g. 22809), or -1 in builds without NCCL.
int NcclVersion();

}  // namespace opreg::symm_mem::nccl
