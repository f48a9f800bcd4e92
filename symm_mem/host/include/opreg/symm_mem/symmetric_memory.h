// Symmetric memory on the host backend: groups, the symmetric heap, per-allocation handles with
// signal pads, and the opreg::Allocator that makes symmetric tensors ordinary opreg Tensors.
//
// Model. A Group is `world` ranks (processes on one machine) that share a Store. Creating it
// (collective) gives every rank a heap: one memfd of `heap_bytes` per rank, passed to every
// peer by ExchangeFds (fd_exchange.h: Unix sockets, every sender's and receiver's credentials
// checked against what the ranks published in the store; docs/security.md), and mapped
// MAP_SHARED by every rank, so each rank addresses every peer's heap (at a different virtual
// address per process). The fds are closed right after mapping and the sockets right after the
// exchange: a live group holds no fds and leaves no socket files.
//
// Allocation is collective: every rank allocates the same sizes in the same order (and frees in
// the same order), so the deterministic first-fit allocator places allocation #n at the same heap
// offset on every rank. Each allocation is [signal pad | data]; the pad has
// `max_channels * world` uint32 slots, zeroed when allocated. Allocate() then checks, through
// the store, that every rank made the same allocation (sequence number, size, offset) and
// reports drift as an error, e.g.
//   rank 1 allocated 4096 bytes as allocation #3 but rank 0 allocated 8192 bytes
//
// Signals (PyTorch's CAS protocol): slot pads[dst][channel * world + src].
// put_signal(dst, ch) waits for CAS(0 -> 1) on the peer's slot; wait_signal(src, ch) waits for
// CAS(1 -> 0) on its own slot, so a slot returns to 0 after every pair. barrier(ch) is
// put_signal to every peer then wait_signal from every peer. Waits spin briefly, then
// sched_yield, then FUTEX_WAIT (shared, not _PRIVATE) on the pad word; every state change is
// followed by FUTEX_WAKE. Every wait has a timeout: a dead or absent peer is an opreg::Error
// (kRuntime) naming the peer, channel, group and allocation, never a hang. After a timeout the
// pads of that allocation are in an undefined state (free it). One channel must not be used by
// two operations at once; different channels may be used concurrently from different threads.
//
// Ownership. Group::Create registers the group by name; Group::Destroy(name) (collective)
// unregisters it and removes its store keys. The heap mappings stay until the last reference
// goes: every SymmetricMemory holds its Group, and every symmetric tensor's storage holds its
// SymmetricMemory, so tensors outlive Destroy safely; the mappings are unmapped when the last
// one dies.
//
// Thread safety. Group::Create/Get/Destroy/Find are synchronized. Allocate is collective: per
// group, allocations must be issued by one thread at a time on every rank (it is serialized by
// a mutex, but the order must match across ranks). Signal calls are thread-safe on distinct
// channels. Bytes of the buffers are not synchronized beyond the signals.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opreg/core/allocator.h"
#include "opreg/core/tensor.h"
#include "opreg/symm_mem/store.h"

namespace opreg::symm_mem {

struct GroupOptions {
  // Bytes of each rank's heap (memfd size; pages are only committed when touched).
  size_t heap_bytes = size_t{256} << 20;
  // Signal channels per allocation (pad = max_channels * world uint32 slots).
  int max_channels = 32;
  // Default timeout of store waits, allocations and the collectives.
  Millis timeout = Millis(30000);
};

class Group;

// The handle of one symmetric allocation (the same allocation on every rank).
class SymmetricMemory {
 public:
  SymmetricMemory(std::shared_ptr<Group> group, size_t offset, size_t block_bytes,
                  size_t buffer_bytes, int64_t alloc_id);
  ~SymmetricMemory();  // Returns the block to the heap (local).
  SymmetricMemory(const SymmetricMemory&) = delete;
  SymmetricMemory& operator=(const SymmetricMemory&) = delete;

  // The data region of `rank`'s copy, as mapped in this process.
  void* buffer_ptr(int rank) const;
  std::vector<void*> buffer_ptrs() const;
  // `rank`'s signal pad (max_channels * world uint32 slots).
  uint32_t* signal_pad(int rank) const;
  size_t buffer_size() const { return buffer_bytes_; }
  size_t signal_pad_size() const;
  int64_t alloc_id() const { return alloc_id_; }
  size_t heap_offset() const { return offset_; }
  int rank() const;
  int world_size() const;
  int max_channels() const;
  const std::string& group_name() const;
  Group& group() const { return *group_; }

  // Collective: every rank calls barrier(channel) the same number of times.
  void barrier(int channel = 0, std::optional<Millis> timeout = std::nullopt);
  // Signals `dst_rank` on `channel` (waits while its previous signal is still unconsumed).
  void put_signal(int dst_rank, int channel = 0, std::optional<Millis> timeout = std::nullopt);
  // Waits for (and consumes) a signal from `src_rank` on `channel`.
  void wait_signal(int src_rank, int channel = 0, std::optional<Millis> timeout = std::nullopt);

 private:
  friend class Group;
  void CheckChannel(std::string_view what, int channel, int peer) const;
  Millis TimeoutOr(std::optional<Millis> t) const;
  std::shared_ptr<Group> group_;
  size_t offset_;        // of the block (pad first) in the heap
  size_t block_bytes_;   // pad + data, rounded
  size_t buffer_bytes_;  // requested bytes
  int64_t alloc_id_;
};

class Group : public std::enable_shared_from_this<Group> {
 public:
  // Collective over `world` ranks: creates and maps the heaps and registers the group under
  // `name` in this process. kValue error for a bad rank/world, an empty name or one over 128
  // bytes, or a name already registered.
  static std::shared_ptr<Group> Create(std::string name, int rank, int world,
                                       std::shared_ptr<Store> store, GroupOptions options = {});
  // The registered group `name`; kKey error naming the known groups when there is none.
  static std::shared_ptr<Group> Get(std::string_view name);
  static bool Exists(std::string_view name);
  // Collective: unregisters `name`, waits (up to the group's timeout) until every rank is here,
  // and removes the group's store keys. A peer that never arrives is logged, not thrown.
  static void Destroy(std::string_view name);
  // The allocation (of any live group) whose data region contains `ptr`, or null.
  static std::shared_ptr<SymmetricMemory> Find(const void* ptr);

  ~Group();  // Unmaps the heaps.
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int world_size() const { return world_; }
  const GroupOptions& options() const { return options_; }
  Store& store() const { return *store_; }
  // Base of `rank`'s heap as mapped in this process.
  char* heap_base(int rank) const { return bases_[static_cast<size_t>(rank)]; }
  size_t pad_bytes() const { return pad_bytes_; }

  // Collective: allocates `nbytes` (any size, 0 included) on every rank and checks for drift.
  std::shared_ptr<SymmetricMemory> Allocate(size_t nbytes);
  // Number of live allocations in this rank's heap.
  size_t live_allocations() const;

 private:
  friend class SymmetricMemory;
  Group(std::string name, int rank, int world, std::shared_ptr<Store> store, GroupOptions options);
  void Bootstrap();
  // "heap_bytes=... max_channels=... world=... backend=host": what every rank must agree on.
  std::string ParametersText() const;
  // Publishes this rank's parameters and throws (naming both ranks' values) if a peer's differ.
  void AgreeOnParameters(const std::string& who);
  // Throws unless `fd` (rank r's heap) is a memory file of heap_bytes sealed against resizing.
  void CheckPeerHeap(const std::string& who, int r, int fd) const;
  void Teardown();
  void Free(size_t offset, size_t block_bytes);
  std::string Key(std::string_view suffix) const { return StrCat(name_, "/", suffix); }

  std::string name_;
  int rank_;
  int world_;
  std::shared_ptr<Store> store_;
  GroupOptions options_;
  size_t pad_bytes_;
  std::vector<char*> bases_;

  mutable std::mutex mu_;
  std::map<size_t, size_t> free_;                          // offset -> bytes (coalesced)
  std::map<size_t, std::weak_ptr<SymmetricMemory>> live_;  // block offset -> handle
  int64_t next_alloc_id_ = 0;
  std::mutex alloc_mu_;  // serializes Allocate
};

// An opreg::Allocator whose allocations come from `group`'s heap (Allocate is collective).
// The DataPtr holds the SymmetricMemory handle; the device is CPU.
class SymmetricAllocator : public Allocator {
 public:
  explicit SymmetricAllocator(std::shared_ptr<Group> group) : group_(std::move(group)) {}
  DataPtr Allocate(size_t nbytes) override;
  Device device() const override { return Device::cpu(); }

 private:
  std::shared_ptr<Group> group_;
};

// Collective: a contiguous CPU tensor in the symmetric heap of group `group_name`.
Tensor empty(IntArrayRef sizes, DType dtype, std::string_view group_name);
// True when `t`'s elements live in a live group's symmetric heap.
bool IsSymmetric(const Tensor& t);
// The handle of the allocation holding `t` (local, not collective: allocations rendezvous when
// they are made). kValue error when `t` is not symmetric.
std::shared_ptr<SymmetricMemory> Rendezvous(const Tensor& t);

}  // namespace opreg::symm_mem
