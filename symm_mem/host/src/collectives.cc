// Host collectives: templated algorithms over a PeerContext (f32 accumulation in rank order),
// and the validating tensor-level entry points.
#include "opreg/symm_mem/collectives.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "futex_wait.h"
#include "opreg/core/dtype_visit.h"
#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/kernels/cpu/fused_add_rms_norm.h"
#include "opreg/ops/shape_inference.h"
#include "opreg/symm_mem/collective_checks.h"

namespace opreg::symm_mem {
namespace {

// ---- The collectives' barrier ----------------------------------------------------------------
//
// The same slots and the same 0/1 CAS protocol as SymmetricMemory::put_signal / wait_signal
// (slot pads[dst][channel * world + src]), with two extra states so that no syscall is made
// unless somebody actually sleeps:
//   0 idle, 1 signal pending,
//   2 idle and the receiver (dst) sleeps on the futex waiting for a signal,
//   3 signal pending and the sender (src) sleeps waiting for it to be consumed.
// A side only calls FUTEX_WAKE when it moves the slot out of 2 or 3. Each slot has one sender
// and one receiver, and 2 and 3 exclude each other (signal absent / present), so no wake-up is
// lost. Waits spin (~kSpinNs), then sched_yield (~kYieldNs: lets an oversubscribed peer run),
// then sleep on the futex in slices, all bounded by the timeout; a side that gives up restores
// the slot, so at rest every slot is 0 again, as SymmetricMemory's barrier leaves it.
namespace pad {

using Clock = std::chrono::steady_clock;
constexpr int64_t kSpinNs = 10'000;
constexpr int64_t kYieldNs = 2'000'000;

inline uint32_t LoadAcquire(uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline bool Cas(uint32_t* p, uint32_t from, uint32_t to) {
  return __atomic_compare_exchange_n(p, &from, to, /*weak=*/false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE);
}
using detail::CpuRelax;
using detail::FutexWait;
using detail::FutexWake;

// Spin, then yield, then `park` (futex sleep, one slice); `step` and `park` return true when
// done. False when `timeout` passes first.
template <class Step, class Park>
bool Wait(Millis timeout, Step&& step, Park&& park) {
  if (step()) return true;
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  for (int i = 1;; ++i) {
    if (step()) return true;
    if ((i & 63) != 0) {
      CpuRelax();
      continue;
    }
    const auto now = Clock::now();
    const int64_t waited =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
    if (now >= deadline) return false;
    if (waited < kSpinNs) continue;
    if (waited < kSpinNs + kYieldNs) {
      ::sched_yield();
      continue;
    }
    if (park(std::min<std::chrono::nanoseconds>(deadline - now, Millis(50)))) return true;
  }
}

// Sender side: deposit a signal in `slot` (waits while the previous one is unconsumed).
bool Put(uint32_t* slot, Millis timeout) {
  auto step = [slot] {
    uint32_t cur = LoadAcquire(slot);
    if (cur == 0) return Cas(slot, 0, 1);
    if (cur == 2 && Cas(slot, 2, 1)) {
      FutexWake(slot);
      return true;
    }
    return false;
  };
  // Flag ourselves (1 -> 3), sleep while 3, and take the slot if it was consumed meanwhile.
  auto park = [slot, &step](std::chrono::nanoseconds wait) {
    if (Cas(slot, 1, 3)) FutexWait(slot, 3, wait);
    if (step()) return true;
    return Cas(slot, 3, 1) ? false : step();  // un-flag before spinning again
  };
  if (Wait(timeout, step, park)) return true;
  // Give up: leave no flag behind.
  if (Cas(slot, 3, 1)) return false;
  return step();
}

// Receiver side: consume the signal in `slot`.
bool Take(uint32_t* slot, Millis timeout) {
  auto step = [slot] {
    uint32_t cur = LoadAcquire(slot);
    if (cur == 1) return Cas(slot, 1, 0);
    if (cur == 3 && Cas(slot, 3, 0)) {
      FutexWake(slot);
      return true;
    }
    return false;
  };
  auto park = [slot, &step](std::chrono::nanoseconds wait) {
    if (Cas(slot, 0, 2)) FutexWait(slot, 2, wait);
    if (step()) return true;
    return Cas(slot, 2, 0) ? false : step();
  };
  if (Wait(timeout, step, park)) return true;
  if (Cas(slot, 2, 0)) return false;
  return step();
}

}  // namespace pad

// barrier(channel) of the operand's allocation, with SymmetricMemory::barrier's order and error
// wording (a timeout names the peer, the channel, the group and the allocation).
void Barrier(const PeerContext& c) {
  SymmetricMemory& h = *c.sync;
  const int w = c.world, me = c.rank, ch = c.channel;
  OPREG_CHECK_INDEX(ch >= 0 && ch < h.max_channels(), "SymmetricMemory::barrier: channel ", ch,
                    " is not in [0, ", h.max_channels(), ")");
  for (int k = 1; k < w; ++k) {
    const int dst = (me + k) % w;
    if (!pad::Put(h.signal_pad(dst) + ch * w + me, c.timeout)) {
      OPREG_THROW(kRuntime, "symm_mem: put_signal timed out after ", c.timeout.count(),
                  " ms: rank ", dst, " did not consume the previous signal of rank ", me,
                  " on channel ", ch, " (group '", h.group_name(), "', allocation #", h.alloc_id(),
                  "); a peer died or skipped a collective");
    }
  }
  for (int k = 1; k < w; ++k) {
    const int src = (me + w - k) % w;
    if (!pad::Take(h.signal_pad(me) + ch * w + src, c.timeout)) {
      OPREG_THROW(kRuntime, "symm_mem: wait_signal timed out after ", c.timeout.count(),
                  " ms: rank ", src, " did not signal rank ", me, " on channel ", ch, " (group '",
                  h.group_name(), "', allocation #", h.alloc_id(),
                  "); a peer died or skipped a collective");
    }
  }
}

// ---- Reductions ---------------------------------------------------------------------------------
//
// acc(i) = ((float(p0[i]) + float(p1[i])) + ...) in rank order, rounded to T once. Blocked so
// that each pass is a simple loop the compiler vectorizes (the per-element order is unchanged,
// so the bits are the same as the element-by-element loop).
constexpr int64_t kBlock = 2048;  // f32 accumulators: 8 KiB, stays in L1

template <class T>
inline void Accumulate(const PeerContext& c, int64_t b, int64_t m, float* __restrict acc) {
  const T* __restrict p0 = reinterpret_cast<const T*>(c.peers[0]) + b;
  for (int64_t i = 0; i < m; ++i) acc[i] = static_cast<float>(p0[i]);
  for (int r = 1; r < c.world; ++r) {
    const T* __restrict pr = reinterpret_cast<const T*>(c.peers[r]) + b;
    for (int64_t i = 0; i < m; ++i) acc[i] += static_cast<float>(pr[i]);
  }
}

template <class T>
void ReduceRange(const PeerContext& c, int64_t begin, int64_t end, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    if (c.world == 2) {  // one pass: out = p0 + p1
      const float* __restrict p0 = reinterpret_cast<const float*>(c.peers[0]) + begin;
      const float* __restrict p1 = reinterpret_cast<const float*>(c.peers[1]) + begin;
      float* __restrict o = out;
      const int64_t m = end - begin;
      for (int64_t i = 0; i < m; ++i) o[i] = p0[i] + p1[i];
      return;
    }
  }
  alignas(64) float acc[kBlock];
  for (int64_t b = begin; b < end; b += kBlock) {
    const int64_t m = std::min(kBlock, end - b);
    Accumulate<T>(c, b, m, acc);
    T* __restrict o = out + (b - begin);
    for (int64_t i = 0; i < m; ++i) o[i] = static_cast<T>(acc[i]);
  }
}

// In place over [begin, end): every rank's copy = the sum. Each block is read from every rank
// before it is written, and only this rank touches [begin, end) during the call.
template <class T>
void ReduceRangeToAll(const PeerContext& c, int64_t begin, int64_t end) {
  alignas(64) float acc[kBlock];
  alignas(64) T res[kBlock];
  for (int64_t b = begin; b < end; b += kBlock) {
    const int64_t m = std::min(kBlock, end - b);
    Accumulate<T>(c, b, m, acc);
    const T* src;
    if constexpr (std::is_same_v<T, float>) {
      src = acc;
    } else {
      for (int64_t i = 0; i < m; ++i) res[i] = static_cast<T>(acc[i]);
      src = res;
    }
    for (int r = 0; r < c.world; ++r) {
      std::memcpy(reinterpret_cast<T*>(c.peers[r]) + b, src, static_cast<size_t>(m) * sizeof(T));
    }
  }
}

template <class T>
void OneShot(const PeerContext& c, int64_t numel, T* out) {
  Barrier(c);
  ReduceRange<T>(c, 0, numel, out);
  Barrier(c);
}

// Each rank reduces its chunk (block by block) and pushes it into every rank's copy.
template <class T>
void TwoShotInPlace(const PeerContext& c, int64_t numel) {
  const int64_t chunk = (numel + c.world - 1) / c.world;
  const int64_t begin = std::min<int64_t>(numel, chunk * c.rank);
  const int64_t end = std::min<int64_t>(numel, begin + chunk);
  Barrier(c);
  ReduceRangeToAll<T>(c, begin, end);
  Barrier(c);
}

void AllGather(const PeerContext& c, size_t bytes, char* out) {
  Barrier(c);
  for (int r = 0; r < c.world; ++r) std::memcpy(out + r * bytes, c.peers[r], bytes);
  Barrier(c);
}

template <class T>
void ReduceScatter(const PeerContext& c, int64_t numel, T* out) {
  const int64_t chunk = numel / c.world;
  Barrier(c);
  ReduceRange<T>(c, chunk * c.rank, chunk * (c.rank + 1), out);
  Barrier(c);
}

template <class F>
void DispatchFloat(std::string_view op, DType dtype, F&& f) {
  VisitFloatingDType(dtype, f, [op](DType unsupported) {
    OPREG_THROW(kType, "[", op, "] argument 'input' (#0): expected dtype f32, f16 or bf16, got ",
                DTypeName(unsupported));
  });
}

}  // namespace

namespace {

// SymmetricOperand, also handing out the allocation (kept alive during a collective). Error text
// is only built on failure (this is on every collective's path).
PeerContext CheckedOperand(std::string_view op, std::string_view arg, int index, const Tensor& t,
                           std::string_view group_name, std::shared_ptr<SymmetricMemory>* keep) {
  std::shared_ptr<Group> g = Group::Get(group_name);
  auto expected = [&] {
    return StrCat("a tensor in the symmetric memory of group '", group_name, "' (symm_mem::empty)");
  };
  OPREG_CHECK_VALUE(t.defined(), ArgErrorMessage(op, arg, index, expected(), "undefined"));
  OPREG_CHECK_VALUE(
      t.is_cpu(), ArgErrorMessage(op, arg, index, expected(), StrCat("device ", t.device().str())));
  OPREG_CHECK_VALUE(t.is_contiguous(),
                    ArgErrorMessage(op, arg, index, "a contiguous tensor", "a strided one"));
  std::shared_ptr<SymmetricMemory> h = Group::Find(t.data_ptr());
  OPREG_CHECK_VALUE(h != nullptr, ArgErrorMessage(op, arg, index, expected(),
                                                  "a tensor outside every symmetric heap"));
  OPREG_CHECK_VALUE(h->group_name() == group_name,
                    ArgErrorMessage(op, arg, index, expected(),
                                    StrCat("a tensor of group '", h->group_name(), "'")));
  const size_t off = static_cast<size_t>(static_cast<const char*>(t.data_ptr()) -
                                         static_cast<const char*>(h->buffer_ptr(h->rank())));
  OPREG_CHECK_VALUE(
      off + t.nbytes() <= h->buffer_size(),
      ArgErrorMessage(op, arg, index, expected(), "a view reaching past its symmetric allocation"));
  PeerContext c;
  c.rank = h->rank();
  c.world = h->world_size();
  c.peers.reserve(static_cast<size_t>(c.world));
  for (int r = 0; r < c.world; ++r) c.peers.push_back(static_cast<char*>(h->buffer_ptr(r)) + off);
  c.sync = h.get();
  c.channel = 0;
  c.timeout = g->options().timeout;
  if (keep != nullptr) *keep = std::move(h);
  return c;
}

}  // namespace

PeerContext SymmetricOperand(std::string_view op, std::string_view arg, int index, const Tensor& t,
                             std::string_view group_name) {
  return CheckedOperand(op, arg, index, t, group_name, nullptr);
}

namespace host {
namespace {
// Keeps the allocation alive during a collective (PeerContext holds a raw pointer).
struct Operand {
  PeerContext ctx;
  std::shared_ptr<SymmetricMemory> keep;
};
Operand Get(std::string_view op, std::string_view arg, int index, const Tensor& t,
            std::string_view group_name) {
  Operand o;
  o.ctx = CheckedOperand(op, arg, index, t, group_name, &o.keep);
  return o;
}
}  // namespace

Tensor& one_shot_all_reduce_out(const Tensor& input, std::string_view reduce_op,
                                std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::one_shot_all_reduce_out";
  CheckReduceOp(op, reduce_op, 1);
  Operand in = Get(op, "input", 0, input, group_name);
  CheckCollectiveOut(op, 3, out, input, input.numel());
  CheckSameShapeOut(op, 3, out, input);
  DispatchFloat(op, input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    OneShot<T>(in.ctx, input.numel(), static_cast<T*>(out.data_ptr()));
  });
  return out;
}

void two_shot_all_reduce_(Tensor& input, std::string_view reduce_op, std::string_view group_name) {
  constexpr std::string_view op = "symm_mem::two_shot_all_reduce_";
  CheckReduceOp(op, reduce_op, 1);
  Operand in = Get(op, "input", 0, input, group_name);
  DispatchFloat(op, input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    TwoShotInPlace<T>(in.ctx, input.numel());
  });
}

Tensor& all_gather_out(const Tensor& input, std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::all_gather_out";
  Operand in = Get(op, "input", 0, input, group_name);
  const int w = in.ctx.world;
  CheckCollectiveOut(op, 2, out, input, input.numel() * w);
  CheckAllGatherOutShape(op, 2, out, input, w);
  DispatchFloat(op, input.dtype(), [&](auto) {
    AllGather(in.ctx, input.nbytes(), static_cast<char*>(out.data_ptr()));
  });
  return out;
}

Tensor& reduce_scatter_out(const Tensor& input, std::string_view reduce_op,
                           std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::reduce_scatter_out";
  CheckReduceOp(op, reduce_op, 1);
  Operand in = Get(op, "input", 0, input, group_name);
  const int w = in.ctx.world;
  CheckDivisibleByWorld(op, input, w);
  CheckCollectiveOut(op, 3, out, input, input.numel() / w);
  DispatchFloat(op, input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ReduceScatter<T>(in.ctx, input.numel(), static_cast<T*>(out.data_ptr()));
  });
  return out;
}

void fused_all_reduce_add_rms_norm_(Tensor& input, Tensor& residual, const Tensor& weight,
                                    double eps, std::string_view group_name) {
  constexpr std::string_view op = "symm_mem::fused_all_reduce_add_rms_norm_";
  ops::CheckFusedAddRmsNormOn(op, input, residual, weight, eps, Device::cpu());
  Operand in = Get(op, "input", 0, input, group_name);
  DispatchFloat(op, input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    TwoShotInPlace<T>(in.ctx, input.numel());
  });
  kernels::cpu::FusedAddRmsNormInplace(input, residual, weight.contiguous(), eps);
}

}  // namespace host
}  // namespace opreg::symm_mem
