// SymmetricMemory (signal pads: CAS protocol with spin / yield / shared futex waits, all with
// timeouts), SymmetricAllocator and the tensor-level helpers (empty, IsSymmetric, Rendezvous).
#include <sched.h>

#include <cerrno>

#include "futex_wait.h"
#include "opreg/core/error.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace opreg::symm_mem {
namespace {

using Clock = std::chrono::steady_clock;

using detail::CpuRelax;
using detail::FutexWait;
using detail::FutexWake;

// Waits until CAS(*slot: from -> to) succeeds, then wakes futex waiters of the slot. Returns
// false on timeout.
bool CasWait(uint32_t* slot, uint32_t from, uint32_t to, Millis timeout) {
  constexpr int kSpins = 128;
  constexpr int kYields = 64;
  Clock::time_point deadline{};
  for (int i = 0;; ++i) {
    uint32_t expected = from;
    if (__atomic_compare_exchange_n(slot, &expected, to, /*weak=*/false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      FutexWake(slot);
      return true;
    }
    if (i < kSpins) {
      CpuRelax();
      continue;
    }
    const auto now = Clock::now();
    if (i == kSpins) deadline = DeadlineAfter(timeout);
    if (now >= deadline) return false;
    if (i < kSpins + kYields) {
      ::sched_yield();
      continue;
    }
    // Sleep until the slot changes from what we saw (or a slice passes, to re-check the clock).
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
    FutexWait(slot, expected, std::min<std::chrono::nanoseconds>(left, Millis(50)));
  }
}

}  // namespace

SymmetricMemory::SymmetricMemory(std::shared_ptr<Group> group, size_t offset, size_t block_bytes,
                                 size_t buffer_bytes, int64_t alloc_id)
    : group_(std::move(group)),
      offset_(offset),
      block_bytes_(block_bytes),
      buffer_bytes_(buffer_bytes),
      alloc_id_(alloc_id) {}

SymmetricMemory::~SymmetricMemory() { group_->Free(offset_, block_bytes_); }

void* SymmetricMemory::buffer_ptr(int rank) const {
  OPREG_CHECK_INDEX(rank >= 0 && rank < world_size(), "SymmetricMemory::buffer_ptr: rank ", rank,
                    " is not in [0, ", world_size(), ")");
  return group_->heap_base(rank) + offset_ + group_->pad_bytes();
}

std::vector<void*> SymmetricMemory::buffer_ptrs() const {
  std::vector<void*> out;
  for (int r = 0; r < world_size(); ++r) out.push_back(buffer_ptr(r));
  return out;
}

uint32_t* SymmetricMemory::signal_pad(int rank) const {
  OPREG_CHECK_INDEX(rank >= 0 && rank < world_size(), "SymmetricMemory::signal_pad: rank ", rank,
                    " is not in [0, ", world_size(), ")");
  return reinterpret_cast<uint32_t*>(group_->heap_base(rank) + offset_);
}

size_t SymmetricMemory::signal_pad_size() const { return group_->pad_bytes(); }
int SymmetricMemory::rank() const { return group_->rank(); }
int SymmetricMemory::world_size() const { return group_->world_size(); }
int SymmetricMemory::max_channels() const { return group_->options().max_channels; }
const std::string& SymmetricMemory::group_name() const { return group_->name(); }

Millis SymmetricMemory::TimeoutOr(std::optional<Millis> t) const {
  return t ? *t : group_->options().timeout;
}

void SymmetricMemory::CheckChannel(std::string_view what, int channel, int peer) const {
  OPREG_CHECK_INDEX(channel >= 0 && channel < max_channels(), "SymmetricMemory::", what,
                    ": channel ", channel, " is not in [0, ", max_channels(), ")");
  OPREG_CHECK_INDEX(peer >= 0 && peer < world_size(), "SymmetricMemory::", what, ": rank ", peer,
                    " is not in [0, ", world_size(), ")");
}

void SymmetricMemory::put_signal(int dst_rank, int channel, std::optional<Millis> timeout) {
  CheckChannel("put_signal", channel, dst_rank);
  const int w = world_size();
  uint32_t* slot = signal_pad(dst_rank) + channel * w + rank();
  const Millis t = TimeoutOr(timeout);
  if (!CasWait(slot, 0, 1, t)) {
    OPREG_THROW(kRuntime, "symm_mem: put_signal timed out after ", t.count(), " ms: rank ",
                dst_rank, " did not consume the previous signal of rank ", rank(), " on channel ",
                channel, " (group '", group_name(), "', allocation #", alloc_id_,
                "); a peer died or skipped a collective");
  }
}

void SymmetricMemory::wait_signal(int src_rank, int channel, std::optional<Millis> timeout) {
  CheckChannel("wait_signal", channel, src_rank);
  const int w = world_size();
  uint32_t* slot = signal_pad(rank()) + channel * w + src_rank;
  const Millis t = TimeoutOr(timeout);
  if (!CasWait(slot, 1, 0, t)) {
    OPREG_THROW(kRuntime, "symm_mem: wait_signal timed out after ", t.count(), " ms: rank ",
                src_rank, " did not signal rank ", rank(), " on channel ", channel, " (group '",
                group_name(), "', allocation #", alloc_id_,
                "); a peer died or skipped a collective");
  }
}

void SymmetricMemory::barrier(int channel, std::optional<Millis> timeout) {
  const int w = world_size();
  const int me = rank();
  // A barrier's deadline is per wait; a dead peer is reported by the first wait that expires.
  for (int k = 1; k < w; ++k) put_signal((me + k) % w, channel, timeout);
  for (int k = 1; k < w; ++k) wait_signal((me + w - k) % w, channel, timeout);
}

DataPtr SymmetricAllocator::Allocate(size_t nbytes) {
  std::shared_ptr<SymmetricMemory> h = group_->Allocate(nbytes);
  void* data = h->buffer_ptr(h->rank());
  auto* ctx = new std::shared_ptr<SymmetricMemory>(std::move(h));
  return DataPtr(
      data, ctx, [](void* c) { delete static_cast<std::shared_ptr<SymmetricMemory>*>(c); },
      Device::cpu());
}

Tensor empty(IntArrayRef sizes, DType dtype, std::string_view group_name) {
  std::shared_ptr<Group> g = Group::Get(group_name);
  const int64_t numel = ComputeNumel(sizes, "symm_mem::empty");
  std::shared_ptr<SymmetricMemory> h = g->Allocate(static_cast<size_t>(numel) * ItemSize(dtype));
  void* data = h->buffer_ptr(h->rank());
  return from_blob(data, sizes, dtype, Device::cpu(), [h](void*) mutable { h.reset(); });
}

bool IsSymmetric(const Tensor& t) {
  if (!t.defined() || !t.is_cpu()) return false;
  return Group::Find(t.data_ptr()) != nullptr;
}

std::shared_ptr<SymmetricMemory> Rendezvous(const Tensor& t) {
  OPREG_CHECK_VALUE(t.defined(), "symm_mem::Rendezvous: undefined tensor");
  std::shared_ptr<SymmetricMemory> h = t.is_cpu() ? Group::Find(t.data_ptr()) : nullptr;
  OPREG_CHECK_VALUE(h != nullptr, "symm_mem::Rendezvous: ", t.ToString(),
                    " is not in symmetric memory (allocate it with symm_mem::empty)");
  return h;
}

}  // namespace opreg::symm_mem
