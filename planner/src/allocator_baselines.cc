// Allocator baselines the arena is compared with: eager exact-size, no reuse, a model of PyTorch's
// CUDACachingAllocator, and Inductor's exact-size wrapper reuse with the PR #159530 peak rule.
// The models are documented in allocator_baselines.h.
#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/planner/allocator_baselines.h"

namespace opreg {
namespace {

void CheckBuffers(absl::Span<const BufferInterval> b) {
  const absl::Status status = ValidateBuffers(b, 1);
  OPREG_CHECK_VALUE(status.ok(), status.message());
}

// Indices of the buffers with size > 0, sorted by (first, index): allocation order.
std::vector<int32_t> AllocationOrder(absl::Span<const BufferInterval> b) {
  std::vector<int32_t> order;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i].size > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    return b[x].first != b[y].first ? b[x].first < b[y].first : x < y;
  });
  return order;
}

// The same buffers sorted by (last, index): free order.
std::vector<int32_t> FreeOrder(absl::Span<const BufferInterval> b, std::vector<int32_t> order) {
  std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    return b[x].last != b[y].last ? b[x].last < b[y].last : x < y;
  });
  return order;
}

// ---- CUDACachingAllocator model -------------------------------------------------------------

constexpr int64_t kMinBlockSize = 512;        // every size is rounded up to this
constexpr int64_t kSmallSize = 1 << 20;       // largest "small" request (1 MiB)
constexpr int64_t kSmallBuffer = 2 << 20;     // small-pool segment size (2 MiB)
constexpr int64_t kLargeBuffer = 20 << 20;    // large-pool segment for requests < 10 MiB
constexpr int64_t kMinLargeAlloc = 10 << 20;  // requests from here get their own segment
constexpr int64_t kRoundLarge = 2 << 20;      // ... rounded up to 2 MiB

int64_t RoundSize(int64_t size) {
  return size < kMinBlockSize ? kMinBlockSize : AlignUp(size, kMinBlockSize);
}

int64_t AllocationSize(int64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return AlignUp(size, kRoundLarge);
}

class CachingAllocatorModel {
 public:
  // Returns the block handed out for a request of `size` (> 0) bytes.
  int32_t Allocate(int64_t size) {
    const int64_t rs = RoundSize(size);
    const bool small = rs <= kSmallSize;
    std::set<std::pair<int64_t, int64_t>>& pool = small ? small_pool_ : large_pool_;
    int32_t b;
    auto it = pool.lower_bound({rs, std::numeric_limits<int64_t>::min()});
    if (it != pool.end()) {
      b = by_addr_.at(it->second);
      pool.erase(it);
    } else {
      const int64_t seg = AllocationSize(rs);
      stats_.reserved_peak += seg;  // never released: reserved only grows
      ++stats_.segments;
      b = NewBlock(next_addr_, seg, small, -1, -1);
      next_addr_ += seg;
    }
    Block& blk = blocks_[b];
    const int64_t remaining = blk.size - rs;
    if (small ? remaining >= kMinBlockSize : remaining > kSmallSize) {
      const int32_t rest = NewBlock(blk.addr + rs, remaining, small, b, blk.next);
      if (blocks_[b].next >= 0) blocks_[blocks_[b].next].prev = rest;
      blocks_[b].next = rest;
      blocks_[b].size = rs;
      PoolOf(rest).emplace(remaining, blocks_[rest].addr);
    }
    blocks_[b].allocated = true;
    allocated_ += blocks_[b].size;
    stats_.allocated_peak = std::max(stats_.allocated_peak, allocated_);
    return b;
  }

  void Free(int32_t b) {
    allocated_ -= blocks_[b].size;
    blocks_[b].allocated = false;
    // Merge with free neighbours of the segment (they are in the pool: take them out).
    const int32_t prev = blocks_[b].prev;
    if (prev >= 0 && !blocks_[prev].allocated) {
      PoolOf(prev).erase({blocks_[prev].size, blocks_[prev].addr});
      by_addr_.erase(blocks_[b].addr);
      blocks_[prev].size += blocks_[b].size;
      Unlink(b);
      b = prev;
    }
    const int32_t next = blocks_[b].next;
    if (next >= 0 && !blocks_[next].allocated) {
      PoolOf(next).erase({blocks_[next].size, blocks_[next].addr});
      by_addr_.erase(blocks_[next].addr);
      blocks_[b].size += blocks_[next].size;
      Unlink(next);
    }
    PoolOf(b).emplace(blocks_[b].size, blocks_[b].addr);
  }

  const CachingAllocatorStats& stats() const { return stats_; }

 private:
  struct Block {
    int64_t addr;
    int64_t size;
    bool small;
    bool allocated;
    int32_t prev;  // neighbours within the segment, -1 at its ends
    int32_t next;
  };

  int32_t NewBlock(int64_t addr, int64_t size, bool small, int32_t prev, int32_t next) {
    blocks_.push_back({addr, size, small, false, prev, next});
    const int32_t id = static_cast<int32_t>(blocks_.size() - 1);
    by_addr_[addr] = id;
    return id;
  }

  void Unlink(int32_t b) {
    const int32_t prev = blocks_[b].prev, next = blocks_[b].next;
    if (prev >= 0) blocks_[prev].next = next;
    if (next >= 0) blocks_[next].prev = prev;
  }

  std::set<std::pair<int64_t, int64_t>>& PoolOf(int32_t b) {
    return blocks_[b].small ? small_pool_ : large_pool_;
  }

  std::vector<Block> blocks_;  // merged-away blocks stay here unused
  std::map<int64_t, int32_t> by_addr_;
  // Free blocks as (size, address): best fit is lower_bound, ties go to the lowest address.
  std::set<std::pair<int64_t, int64_t>> small_pool_, large_pool_;
  int64_t next_addr_ = 0;
  int64_t allocated_ = 0;
  CachingAllocatorStats stats_;
};

// ---- Lazy segment tree: range add, range max (Inductor's SegmentedTree(mem, add, max, 0)) ----

class MaxAddTree {
 public:
  explicit MaxAddTree(const std::vector<int64_t>& values) : n_(values.size()) {
    size_ = 1;
    while (size_ < n_) size_ <<= 1;
    max_.assign(2 * size_, std::numeric_limits<int64_t>::min() / 4);
    add_.assign(2 * size_, 0);
    for (size_t i = 0; i < n_; ++i) max_[size_ + i] = values[i];
    for (size_t i = size_ - 1; i >= 1; --i) max_[i] = std::max(max_[2 * i], max_[2 * i + 1]);
  }
  // Adds v to [lo, hi) (no-op when empty).
  void Add(size_t lo, size_t hi, int64_t v) {
    if (lo < hi) Add(1, 0, size_, lo, hi, v);
  }
  // Max over [lo, hi); very negative when empty.
  int64_t Max(size_t lo, size_t hi) const {
    return lo < hi ? Max(1, 0, size_, lo, hi) : std::numeric_limits<int64_t>::min() / 4;
  }
  int64_t Max() const { return Max(0, n_); }

 private:
  void Add(size_t node, size_t l, size_t r, size_t lo, size_t hi, int64_t v) {
    if (hi <= l || r <= lo) return;
    if (lo <= l && r <= hi) {
      max_[node] += v;
      add_[node] += v;
      return;
    }
    const size_t m = (l + r) / 2;
    Add(2 * node, l, m, lo, hi, v);
    Add(2 * node + 1, m, r, lo, hi, v);
    max_[node] = std::max(max_[2 * node], max_[2 * node + 1]) + add_[node];
  }
  int64_t Max(size_t node, size_t l, size_t r, size_t lo, size_t hi) const {
    if (hi <= l || r <= lo) return std::numeric_limits<int64_t>::min() / 4;
    if (lo <= l && r <= hi) return max_[node];
    const size_t m = (l + r) / 2;
    return std::max(Max(2 * node, l, m, lo, hi), Max(2 * node + 1, m, r, lo, hi)) + add_[node];
  }

  size_t n_, size_;
  std::vector<int64_t> max_, add_;
};

}  // namespace

int64_t NaivePeakBytes(absl::Span<const BufferInterval> b) { return LowerBoundBytes(b, 1); }

int64_t NoReusePeakBytes(absl::Span<const BufferInterval> b) {
  CheckBuffers(b);
  int64_t total = 0;
  for (const BufferInterval& x : b) total += x.size;
  return total;
}

CachingAllocatorStats SimulateCachingAllocator(absl::Span<const BufferInterval> b) {
  CheckBuffers(b);
  const std::vector<int32_t> allocs = AllocationOrder(b);
  const std::vector<int32_t> frees = FreeOrder(b, allocs);
  CachingAllocatorModel model;
  std::vector<int32_t> block(b.size(), -1);
  size_t next_free = 0;
  for (int32_t i : allocs) {
    // Frees of earlier steps happen before this step's allocations.
    while (next_free < frees.size() && b[frees[next_free]].last < b[i].first) {
      model.Free(block[frees[next_free++]]);
    }
    block[i] = model.Allocate(b[i].size);
  }
  return model.stats();
}

int64_t CachingAllocatorPeakBytes(absl::Span<const BufferInterval> b) {
  return SimulateCachingAllocator(b).reserved_peak;
}

ExactSizeReuseStats SimulateExactSizeReuse(absl::Span<const BufferInterval> b, bool peak_rule) {
  CheckBuffers(b);
  ExactSizeReuseStats stats;
  const std::vector<int32_t> allocs = AllocationOrder(b);
  if (allocs.empty()) return stats;
  const std::vector<int32_t> frees = FreeOrder(b, allocs);
  // Compressed time: the steps where the timeline can change (firsts and lasts + 1). Segment k
  // is [points[k], points[k+1]).
  std::vector<int64_t> points;
  points.reserve(2 * allocs.size());
  for (int32_t i : allocs) {
    points.push_back(b[i].first);
    points.push_back(static_cast<int64_t>(b[i].last) + 1);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto index = [&](int64_t step) {
    return static_cast<size_t>(std::lower_bound(points.begin(), points.end(), step) -
                               points.begin());
  };
  std::vector<int64_t> mem(points.size(), 0);
  for (int32_t i : allocs) {
    mem[index(b[i].first)] += b[i].size;
    mem[index(static_cast<int64_t>(b[i].last) + 1)] -= b[i].size;
  }
  for (size_t k = 1; k < mem.size(); ++k) mem[k] += mem[k - 1];
  MaxAddTree tree(mem);
  stats.baseline_peak = tree.Max();

  // reuse_pool[size]: LIFO stack of the steps after which freed storages became available.
  std::map<int64_t, std::vector<int32_t>> pool;
  size_t next_free = 0;
  for (int32_t i : allocs) {
    const int32_t t = b[i].first;
    while (next_free < frees.size() && b[frees[next_free]].last < t) {
      const int32_t d = frees[next_free++];
      pool[b[d].size].push_back(b[d].last);
    }
    auto it = pool.find(b[i].size);
    if (it == pool.end() || it->second.empty()) continue;
    const int32_t f = it->second.back();
    const size_t lo = index(static_cast<int64_t>(f) + 1), hi = index(t);
    if (!peak_rule || lo == hi || b[i].size + tree.Max(lo, hi) <= stats.baseline_peak) {
      it->second.pop_back();
      tree.Add(lo, hi, b[i].size);
      ++stats.reused;
    }
  }
  stats.peak_bytes = tree.Max();
  return stats;
}

int64_t ExactSizeReusePeakBytes(absl::Span<const BufferInterval> b) {
  return SimulateExactSizeReuse(b, /*peak_rule=*/true).peak_bytes;
}

TraceSummary SummarizeTrace(absl::Span<const BufferInterval> buffers, int64_t alignment,
                            int timing_runs) {
  const absl::Status valid = ValidateBuffers(buffers, alignment);
  OPREG_CHECK_VALUE(valid.ok(), valid.message());
  TraceSummary s;
  s.buffers = static_cast<int64_t>(buffers.size());
  for (const BufferInterval& b : buffers) s.steps = std::max<int64_t>(s.steps, b.last + 1);
  s.alignment = alignment;
  s.no_reuse_bytes = NoReusePeakBytes(buffers);
  s.eager_bytes = NaivePeakBytes(buffers);
  s.caching = SimulateCachingAllocator(buffers);
  s.reuse = SimulateExactSizeReuse(buffers, /*peak_rule=*/true);
  s.reuse_no_rule_bytes = SimulateExactSizeReuse(buffers, /*peak_rule=*/false).peak_bytes;
  s.lb_bytes = LowerBoundBytes(buffers, alignment);
  s.plan_ms = std::numeric_limits<double>::max();
  for (int run = 0; run < std::max(1, timing_runs); ++run) {
    // A repeat only sharpens the timing of a fast plan; a slow one (a dense trace near the
    // heuristics' time limit) is timed once.
    if (run > 0 && s.plan_ms > 100) break;
    const auto t0 = std::chrono::steady_clock::now();
    Placement p = PlaceBuffers(buffers, PlacementOptions{alignment});
    const auto t1 = std::chrono::steady_clock::now();
    s.plan_ms = std::min(s.plan_ms, std::chrono::duration<double, std::milli>(t1 - t0).count());
    s.placement = std::move(p);
  }
  s.arena_bytes = s.placement.arena_bytes;
  s.strategy = s.placement.strategy;
  s.verified = VerifyPlacement(buffers, s.placement, alignment).ok();
  return s;
}

}  // namespace opreg
