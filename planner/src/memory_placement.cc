// Placement: the lower bound, the greedy portfolio, the verifier and the trace summary.
// The allocator baselines live in allocator_baselines.cc.
#include "opreg/planner/memory_placement.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <utility>

#include "opreg/core/error.h"
#include "opreg/core/string_util.h"
#include "opreg/planner/exact_placement.h"

namespace opreg {
namespace {

std::string DescribeBuffer(absl::Span<const BufferInterval> b, size_t i) {
  return StrCat(i, " (size ", b[i].size, ", steps ", b[i].first, "..", b[i].last, ")");
}

void CheckBuffers(absl::Span<const BufferInterval> b, int64_t alignment) {
  const absl::Status status = ValidateBuffers(b, alignment);
  OPREG_CHECK_VALUE(status.ok(), status.message());
}

// A buffer as the greedy pass sees it: aligned size, interval.
struct Item {
  int64_t size;  // aligned
  int32_t first;
  int32_t last;
};

// The best-gap rule over `occupied` ((offset, end) of the placed buffers that overlap the new one
// in time), which it sorts. Returns the offset for a buffer of `size` bytes.
int64_t BestGap(std::vector<std::pair<int64_t, int64_t>>& occupied, int64_t size) {
  std::sort(occupied.begin(), occupied.end());
  int64_t prev = 0;
  int64_t best = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  for (const auto& [off, end] : occupied) {
    if (off > prev) {
      const int64_t gap = off - prev;
      if (gap >= size && gap < best_gap) {
        best = prev;
        best_gap = gap;
      }
    }
    prev = std::max(prev, end);
  }
  return best >= 0 ? best : prev;
}

// The conflict graph in CSR form: adj[start[i] .. start[i+1]) are the buffers overlapping i.
struct ConflictGraph {
  std::vector<int64_t> start;
  std::vector<int32_t> adj;
};

// Buffers with size > 0 sorted by (first, index).
std::vector<int32_t> ByFirst(const std::vector<Item>& items) {
  std::vector<int32_t> idx;
  idx.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].size > 0) idx.push_back(static_cast<int32_t>(i));
  }
  std::sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) {
    return items[a].first != items[b].first ? items[a].first < items[b].first : a < b;
  });
  return idx;
}

// Sweeps the buffers in first-step order keeping those still alive; calls fn(a, b) once per
// overlapping pair.
template <class Fn>
void ForEachOverlap(const std::vector<Item>& items, const std::vector<int32_t>& by_first, Fn fn) {
  std::vector<int32_t> active;
  for (int32_t b : by_first) {
    const int32_t t = items[b].first;
    size_t k = 0;
    for (int32_t a : active) {
      if (items[a].last >= t) {
        active[k++] = a;
        fn(a, b);
      }
    }
    active.resize(k);
    active.push_back(b);
  }
}

// Counts the overlapping pairs, stopping early past `limit`.
int64_t CountOverlaps(const std::vector<Item>& items, const std::vector<int32_t>& by_first,
                      int64_t limit) {
  int64_t pairs = 0;
  std::vector<int32_t> active;
  for (int32_t b : by_first) {
    const int32_t t = items[b].first;
    size_t k = 0;
    for (int32_t a : active) {
      if (items[a].last >= t) active[k++] = a;
    }
    active.resize(k);
    pairs += static_cast<int64_t>(k);
    if (pairs > limit) return pairs;
    active.push_back(b);
  }
  return pairs;
}

ConflictGraph BuildConflictGraph(const std::vector<Item>& items,
                                 const std::vector<int32_t>& by_first) {
  const size_t n = items.size();
  ConflictGraph g;
  std::vector<int64_t> degree(n + 1, 0);
  ForEachOverlap(items, by_first, [&](int32_t a, int32_t b) {
    ++degree[a];
    ++degree[b];
  });
  g.start.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) g.start[i + 1] = g.start[i] + degree[i];
  g.adj.resize(static_cast<size_t>(g.start[n]));
  std::vector<int64_t> fill(g.start.begin(), g.start.end() - 1);
  ForEachOverlap(items, by_first, [&](int32_t a, int32_t b) {
    g.adj[static_cast<size_t>(fill[a]++)] = b;
    g.adj[static_cast<size_t>(fill[b]++)] = a;
  });
  return g;
}

// Above this many overlapping pairs the conflict graph is not built (8M pairs = 64 MB of
// adjacency); the greedy then scans every placed buffer instead.
constexpr int64_t kMaxConflictPairs = 8'000'000;

using Clock = std::chrono::steady_clock;

// Greedy best-gap in `order`. Either `graph` (neighbour lists) or a full scan of the placed list.
// Returns the arena, or -1 when `deadline` passed first (the offsets are then partial).
int64_t GreedyPlace(const std::vector<Item>& items, const std::vector<int32_t>& order,
                    const ConflictGraph* graph, Clock::time_point deadline,
                    std::vector<int64_t>* offsets) {
  offsets->assign(items.size(), 0);
  std::vector<char> placed(items.size(), 0);
  std::vector<std::pair<int64_t, int64_t>> occupied;
  std::vector<int32_t> placed_list;
  int64_t arena = 0;
  size_t done = 0;
  for (int32_t i : order) {
    // A buffer costs O(its overlaps); a clock read every 16 keeps a dense trace from running
    // past the deadline by more than a few milliseconds.
    if ((++done & 15) == 0 && Clock::now() > deadline) return -1;
    const Item& it = items[i];
    occupied.clear();
    if (graph != nullptr) {
      for (int64_t k = graph->start[i]; k < graph->start[i + 1]; ++k) {
        const int32_t j = graph->adj[static_cast<size_t>(k)];
        if (placed[j]) occupied.emplace_back((*offsets)[j], (*offsets)[j] + items[j].size);
      }
    } else {
      for (int32_t j : placed_list) {
        if (items[j].first <= it.last && it.first <= items[j].last) {
          occupied.emplace_back((*offsets)[j], (*offsets)[j] + items[j].size);
        }
      }
      placed_list.push_back(i);
    }
    const int64_t off = BestGap(occupied, it.size);
    (*offsets)[i] = off;
    placed[i] = 1;
    arena = std::max(arena, off + it.size);
  }
  return arena;
}

// ORT-style online best fit: steps in order, frees before allocations, allocations in input order.
// The alive buffers never overlap in space (each was placed clear of those alive with it), so
// the free space below the top alive buffer is a set of gaps between neighbours, kept ordered by
// (size, offset): a best fit (smallest gap that fits, lowest offset among equals) is one
// lower_bound, and a free merges its neighbours' gaps. O(n log n) at any trace density, so this
// member always runs to the end, whatever the deadline.
int64_t OnlinePlace(const std::vector<Item>& items, const std::vector<int32_t>& by_first,
                    std::vector<int64_t>* offsets) {
  offsets->assign(items.size(), 0);
  std::map<int64_t, int64_t> alive;            // offset -> end
  std::set<std::pair<int64_t, int64_t>> gaps;  // (size, offset), size > 0
  auto add_gap = [&](int64_t from, int64_t to) {
    if (to > from) gaps.emplace(to - from, from);
  };
  auto remove_gap = [&](int64_t from, int64_t to) {
    if (to > from) gaps.erase({to - from, from});
  };
  std::vector<int32_t> by_last(by_first);
  std::sort(by_last.begin(), by_last.end(), [&](int32_t a, int32_t b) {
    return items[a].last != items[b].last ? items[a].last < items[b].last : a < b;
  });
  size_t next_death = 0;
  int64_t arena = 0;
  for (int32_t i : by_first) {
    const Item& it = items[i];
    while (next_death < by_last.size() && items[by_last[next_death]].last < it.first) {
      const int32_t d = by_last[next_death++];
      const auto pos = alive.find((*offsets)[d]);
      const int64_t below = pos == alive.begin() ? 0 : std::prev(pos)->second;
      const auto next = std::next(pos);
      remove_gap(below, pos->first);
      if (next != alive.end()) {
        remove_gap(pos->second, next->first);
        add_gap(below, next->first);
      }  // else the top alive buffer died: the space above `below` is the top again
      alive.erase(pos);
    }
    int64_t off;
    const auto fit = gaps.lower_bound({it.size, std::numeric_limits<int64_t>::min()});
    if (fit != gaps.end()) {
      off = fit->second;
      const int64_t gap_end = fit->second + fit->first;
      gaps.erase(fit);
      add_gap(off + it.size, gap_end);
    } else {
      off = alive.empty() ? 0 : alive.rbegin()->second;
    }
    (*offsets)[i] = off;
    alive.emplace(off, off + it.size);
    arena = std::max(arena, off + it.size);
  }
  return arena;
}

// The most buffers of positive size alive at one step.
int64_t MaxLiveCount(const std::vector<Item>& items, const std::vector<int32_t>& by_first) {
  std::vector<std::pair<int64_t, int>> events;
  events.reserve(2 * by_first.size());
  for (int32_t i : by_first) {
    events.emplace_back(items[i].first, 1);
    events.emplace_back(static_cast<int64_t>(items[i].last) + 1, -1);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, most = 0;
  for (const auto& e : events) {
    live += e.second;
    most = std::max(most, live);
  }
  return most;
}

// For traces with at most two buffers alive at any step (chains), the conflict graph is a forest:
// two-colour it, put one colour at offset 0 and the other flush against the top of an arena of
// `lb` bytes. Every overlapping pair (a, b) is alive at a common step, so size_a + size_b <= lb
// and the two never meet: the arena is exactly the LB, which greedy orders can miss.
int64_t TwoLevelPlace(const std::vector<Item>& items, const std::vector<int32_t>& by_first,
                      const ConflictGraph& g, int64_t lb, std::vector<int64_t>* offsets) {
  offsets->assign(items.size(), 0);
  std::vector<int8_t> colour(items.size(), -1);
  std::vector<int32_t> stack;
  for (int32_t root : by_first) {
    if (colour[root] >= 0) continue;
    colour[root] = 0;
    stack.push_back(root);
    while (!stack.empty()) {
      const int32_t i = stack.back();
      stack.pop_back();
      for (int64_t k = g.start[i]; k < g.start[i + 1]; ++k) {
        const int32_t j = g.adj[static_cast<size_t>(k)];
        if (colour[j] < 0) {
          colour[j] = static_cast<int8_t>(1 - colour[i]);
          stack.push_back(j);
        }
      }
    }
  }
  for (int32_t i : by_first) (*offsets)[i] = colour[i] == 0 ? 0 : lb - items[i].size;
  return lb;
}

}  // namespace

absl::Status ValidateBuffers(absl::Span<const BufferInterval> buffers, int64_t alignment) {
  if (alignment < 1) {
    return absl::InvalidArgumentError(StrCat("alignment must be >= 1, got ", alignment));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInterval& b = buffers[i];
    if (b.size < 0 || b.first < 0 || b.first > b.last) {
      return absl::InvalidArgumentError(
          StrCat("buffer ", DescribeBuffer(buffers, i), ": need size >= 0 and 0 <= first <= last"));
    }
    if (b.size > std::numeric_limits<int64_t>::max() / 4 - alignment) {
      return absl::InvalidArgumentError(
          StrCat("buffer ", DescribeBuffer(buffers, i), ": size too large"));
    }
  }
  return absl::OkStatus();
}

int64_t LowerBoundBytes(absl::Span<const BufferInterval> buffers, int64_t alignment) {
  CheckBuffers(buffers, alignment);
  // Events (step, delta): +size at first, -size at last + 1. At equal steps the frees go first,
  // since last + 1 == t means the buffer is dead at t.
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(buffers.size() * 2);
  for (const BufferInterval& b : buffers) {
    if (b.size == 0) continue;
    const int64_t s = AlignUp(b.size, alignment);
    events.emplace_back(b.first, s);
    events.emplace_back(static_cast<int64_t>(b.last) + 1, -s);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (const auto& e : events) {
    live += e.second;
    peak = std::max(peak, live);
  }
  return peak;
}

Placement PlaceBuffers(absl::Span<const BufferInterval> buffers, const PlacementOptions& options) {
  const int64_t alignment = options.alignment;
  CheckBuffers(buffers, alignment);
  Placement result;
  result.offsets.assign(buffers.size(), 0);
  if (buffers.empty()) return result;

  std::vector<Item> items(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    items[i] = {AlignUp(buffers[i].size, alignment), buffers[i].first, buffers[i].last};
  }
  const std::vector<int32_t> by_first = ByFirst(items);
  if (by_first.empty()) {  // only zero-size buffers
    result.strategy = "size";
    return result;
  }
  const Clock::time_point start = Clock::now();
  // The greedy orders cost O(overlapping pairs), n^2 / 2 for a trace whose buffers all overlap,
  // so they share a time limit; the online member (O(n log n)) always completes, so a placement
  // exists however dense the trace. With an exact budget, the heuristics take at most half of it.
  double heuristic_ms = std::max(options.heuristic_ms, 0.0);
  if (options.budget_ms > 0) heuristic_ms = std::min(heuristic_ms, options.budget_ms / 2);
  const Clock::time_point deadline =
      start + std::chrono::microseconds(static_cast<int64_t>(std::min(heuristic_ms, 1e12) * 1e3));

  ConflictGraph graph;
  const bool use_graph = CountOverlaps(items, by_first, kMaxConflictPairs) <= kMaxConflictPairs;
  if (use_graph) graph = BuildConflictGraph(items, by_first);

  // Members in the order they run (the cheap, always-complete ones first); `rank` breaks ties
  // between equal arenas as documented (size, lifetime, area, online, two-level).
  struct Member {
    const char* name;
    int rank;
  };
  std::vector<Member> members = {{"online", 3}};
  // Chains (at most two buffers alive per step) also get the exact two-level placement.
  if (use_graph && MaxLiveCount(items, by_first) <= 2) members.push_back({"two-level", 4});
  members.insert(members.end(), {{"size", 0}, {"lifetime", 1}, {"area", 2}});

  auto length = [&](int32_t i) { return static_cast<int64_t>(items[i].last) - items[i].first + 1; };
  auto greedy_order = [&](std::string_view name) {
    std::vector<int32_t> order(by_first);  // by_first: stable ties on (first, index)
    auto by = [&](auto key_greater) { std::stable_sort(order.begin(), order.end(), key_greater); };
    if (name == "size") {
      by([&](int32_t a, int32_t b) { return items[a].size > items[b].size; });
    } else if (name == "lifetime") {
      by([&](int32_t a, int32_t b) {
        const int64_t la = length(a), lb = length(b);
        return la != lb ? la > lb : items[a].size > items[b].size;
      });
    } else {  // area; size * length can overflow int64 only past 2^31 steps x 2^32 bytes
      by([&](int32_t a, int32_t b) {
        const __int128 aa = static_cast<__int128>(items[a].size) * length(a);
        const __int128 ab = static_cast<__int128>(items[b].size) * length(b);
        return aa != ab ? aa > ab : items[a].size > items[b].size;
      });
    }
    return order;
  };

  std::vector<int64_t> offsets;
  result.arena_bytes = std::numeric_limits<int64_t>::max();
  int best_rank = 0;
  for (const Member& m : members) {
    const std::string_view name = m.name;
    int64_t arena;
    if (name == "online") {
      arena = OnlinePlace(items, by_first, &offsets);
    } else if (name == "two-level") {
      arena = TwoLevelPlace(items, by_first, graph, LowerBoundBytes(buffers, alignment), &offsets);
    } else if (heuristic_ms <= 0 || Clock::now() > deadline) {
      arena = -1;
    } else {
      arena =
          GreedyPlace(items, greedy_order(name), use_graph ? &graph : nullptr, deadline, &offsets);
    }
    if (arena < 0) {
      ++result.members_stopped;
      continue;
    }
    if (arena < result.arena_bytes || (arena == result.arena_bytes && m.rank < best_rank)) {
      result.arena_bytes = arena;
      result.strategy = m.name;
      best_rank = m.rank;
      result.offsets.swap(offsets);
    }
  }
  if (options.budget_ms > 0) {
    const double left_ms =
        options.budget_ms - std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    ImprovePlacementExactly(buffers, alignment, std::max(left_ms, 0.0), &result);
  } else if (result.arena_bytes == LowerBoundBytes(buffers, alignment)) {
    result.optimal_by = "lower bound";
  }
  return result;
}

absl::Status VerifyPlacement(absl::Span<const BufferInterval> buffers, const Placement& p,
                             int64_t alignment) {
  if (absl::Status s = ValidateBuffers(buffers, alignment); !s.ok()) return s;
  if (p.offsets.size() != buffers.size()) {
    return absl::FailedPreconditionError(
        StrCat("placement has ", p.offsets.size(), " offsets for ", buffers.size(), " buffers"));
  }
  auto describe = [&](size_t i) {
    return StrCat(i, " (size ", buffers[i].size, ", steps ", buffers[i].first, "..",
                  buffers[i].last, ", offset ", p.offsets[i], ")");
  };
  for (size_t i = 0; i < buffers.size(); ++i) {
    const int64_t off = p.offsets[i];
    if (off < 0 || off % alignment != 0) {
      return absl::FailedPreconditionError(
          StrCat("buffer ", describe(i), ": offset is not a non-negative multiple of ", alignment));
    }
    if (off > p.arena_bytes - buffers[i].size) {
      return absl::FailedPreconditionError(
          StrCat("buffer ", describe(i), ": ends past the arena of ", p.arena_bytes, " bytes"));
    }
  }
  // Sweep in first-step order keeping the live buffers ordered by offset. The live set never
  // overlaps (we stop at the first collision), so a new buffer only has to be compared with its
  // neighbours in offset order.
  std::vector<int32_t> order;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return buffers[a].first != buffers[b].first ? buffers[a].first < buffers[b].first : a < b;
  });
  std::vector<int32_t> by_last(order);
  std::sort(by_last.begin(), by_last.end(), [&](int32_t a, int32_t b) {
    return buffers[a].last != buffers[b].last ? buffers[a].last < buffers[b].last : a < b;
  });
  std::set<std::pair<int64_t, int32_t>> live;
  size_t next_death = 0;
  auto collide = [&](int32_t a, int32_t b) {
    return absl::FailedPreconditionError(StrCat("buffers ", describe(std::min(a, b)), " and ",
                                                describe(std::max(a, b)),
                                                " overlap in time and space"));
  };
  for (int32_t i : order) {
    while (next_death < by_last.size() && buffers[by_last[next_death]].last < buffers[i].first) {
      const int32_t d = by_last[next_death++];
      live.erase({p.offsets[d], d});
    }
    const int64_t off = p.offsets[i];
    const int64_t end = off + buffers[i].size;
    auto next = live.lower_bound({off, std::numeric_limits<int32_t>::min()});
    if (next != live.end() && next->first < end) return collide(i, next->second);
    if (next != live.begin()) {
      auto prev = std::prev(next);
      if (prev->first + buffers[prev->second].size > off) return collide(i, prev->second);
    }
    live.emplace(off, i);
  }
  return absl::OkStatus();
}

}  // namespace opreg
