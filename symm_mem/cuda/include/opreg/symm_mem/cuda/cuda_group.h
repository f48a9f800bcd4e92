// The CUDA symmetric-memory backend: groups of rank processes on one node whose device
// allocations every rank can address (CUDA VMM, PyTorch's "CUDA" backend recipe).
//
// Model. A CudaGroup is `world` rank processes sharing a Store, each on one CUDA device
// (several ranks may share a device: correctness only, kernels then time-slice). Allocation is
// collective (every rank allocates the same sizes in the same order): each allocation is one
// cuMemCreate block per rank (pinned device memory, POSIX_FILE_DESCRIPTOR handle type, size
// rounded to the recommended granularity) laid out as [signal pad | data]. The pad is zeroed,
// then every rank publishes (size, block size) of allocation #n in the store and compares them
// with rank 0's (drift is an error, e.g. "rank 1 allocated 4096 bytes as allocation #3 but rank
// 0 allocated 8192 bytes"). The blocks are then exported as fds, exchanged with SCM_RIGHTS
// (fd_exchange.h), imported (cuMemImportFromShareableHandle) and mapped
// (cuMemAddressReserve / cuMemMap / cuMemSetAccess) by every rank, and the peer-pointer and
// signal-pad tables are uploaded to the device once. The exported and imported fds are closed
// as soon as they are mapped.
//
// Errors: opreg::Error. Every driver / runtime call is checked (kRuntime naming the call, e.g.
// "symm_mem (cuda): cuMemCreate(2097152 bytes on device 0) failed: CUDA_ERROR_OUT_OF_MEMORY:
// ..."); store waits time out with kRuntime naming the missing ranks; bad arguments are kValue;
// an unknown group name is kKey. A failed Allocate releases whatever it had mapped.
//
// Ownership. CudaGroup::Create registers the group by name in this process; Destroy(name)
// (local) unregisters it. Every CudaSymmetricMemory holds its group; every tensor made by
// cuda::empty holds its CudaSymmetricMemory, so memory stays mapped while any tensor lives. The
// destructor of CudaSymmetricMemory unmaps the peers' blocks and releases the handles; the
// caller must make sure no kernel still uses them (synchronize first).
//
// Thread safety. Create / Get / Destroy / Find are synchronized. Allocate is collective and is
// serialized per group (the order must match across ranks). Accessors are const and safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "opreg/core/tensor.h"
#include "opreg/symm_mem/store.h"

namespace opreg::symm_mem::cuda {

struct CudaGroupOptions {
  // CUDA device of this rank (-1: the device current when Create is called).
  int device = -1;
  // Store waits during Create / Allocate, and the kernels' signal waits.
  Millis timeout = Millis(30000);
};

class CudaGroup;

// One collective allocation, as mapped in this process.
class CudaSymmetricMemory {
 public:
  ~CudaSymmetricMemory();
  CudaSymmetricMemory(const CudaSymmetricMemory&) = delete;
  CudaSymmetricMemory& operator=(const CudaSymmetricMemory&) = delete;

  // Device address (in this process) of rank `rank`'s data region / signal pad. kIndex error
  // for a rank outside [0, world).
  void* buffer_ptr(int rank) const;
  uint32_t* signal_pad(int rank) const;
  // Device arrays of world_size() entries (the same addresses as above), for kernels.
  void* const* buffer_ptrs_dev() const { return dev_buffers_; }
  uint32_t* const* signal_pads_dev() const { return dev_pads_; }
  size_t buffer_size() const { return buffer_bytes_; }
  size_t signal_pad_size() const { return pad_bytes_; }
  int64_t alloc_id() const { return alloc_id_; }
  int rank() const;
  int world_size() const;
  int device() const;
  const std::string& group_name() const;
  CudaGroup& group() const { return *group_; }

 private:
  friend class CudaGroup;
  CudaSymmetricMemory(std::shared_ptr<CudaGroup> group, size_t buffer_bytes, int64_t alloc_id);
  void Release() noexcept;
  // Maps `handle` (size block_bytes_) at a fresh address readable/writable by this device.
  unsigned long long MapBlock(unsigned long long handle, int owner);

  std::shared_ptr<CudaGroup> group_;
  size_t buffer_bytes_;
  size_t pad_bytes_;
  size_t block_bytes_ = 0;
  int64_t alloc_id_;
  // CUmemGenericAllocationHandle / CUdeviceptr (unsigned long long; no CUDA header here).
  std::vector<unsigned long long> handles_;  // 0: none
  std::vector<unsigned long long> bases_;    // 0: not mapped
  void** dev_buffers_ = nullptr;             // one cudaMalloc: [buffers | pads]
  uint32_t** dev_pads_ = nullptr;
};

class CudaGroup : public std::enable_shared_from_this<CudaGroup> {
 public:
  // Registers the group `name` (local: the store is first used by Allocate). Makes
  // options.device current and initializes its context. kValue for a bad rank / world / name.
  static std::shared_ptr<CudaGroup> Create(std::string name, int rank, int world,
                                           std::shared_ptr<Store> store,
                                           CudaGroupOptions options = {});
  static std::shared_ptr<CudaGroup> Get(std::string_view name);
  static bool Exists(std::string_view name);
  // Unregisters `name` (local). Live allocations keep the group object alive.
  static void Destroy(std::string_view name);
  // The live allocation (of any group) whose data region contains the device address `ptr`.
  static std::shared_ptr<CudaSymmetricMemory> Find(const void* ptr);

  CudaGroup(const CudaGroup&) = delete;
  CudaGroup& operator=(const CudaGroup&) = delete;

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int world_size() const { return world_; }
  int device() const { return options_.device; }
  const CudaGroupOptions& options() const { return options_; }
  Store& store() const { return *store_; }

  // Collective: allocates `nbytes` (0 included) on every rank and maps every peer's block.
  std::shared_ptr<CudaSymmetricMemory> Allocate(size_t nbytes);

 private:
  CudaGroup(std::string name, int rank, int world, std::shared_ptr<Store> store,
            CudaGroupOptions options);
  void CheckDrift(int64_t id, size_t nbytes, size_t block_bytes);
  std::string Key(std::string_view suffix) const;

  std::string name_;
  int rank_;
  int world_;
  std::shared_ptr<Store> store_;
  CudaGroupOptions options_;
  std::mutex alloc_mu_;  // serializes Allocate
  int64_t next_alloc_id_ = 0;
};

// Collective: a contiguous CUDA tensor (on the group's device) in a fresh symmetric allocation
// of group `group_name`.
Tensor empty(IntArrayRef sizes, DType dtype, std::string_view group_name);
// True when `t` is a CUDA tensor inside a live CUDA symmetric allocation.
bool IsSymmetric(const Tensor& t);

}  // namespace opreg::symm_mem::cuda
