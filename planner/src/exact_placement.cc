// The exact placement search (exact_placement.h). Everything is in units of the alignment, so
// offsets are integers and any placement found is aligned. The search is a depth-first search
// that undoes its changes on the way back (change logs), so a node costs O(n log n) for the
// candidate ordering plus the sections it touches, and no state is copied but the ordering.
#include "opreg/planner/exact_placement.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <utility>

#include "opreg/core/error.h"

namespace opreg {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kNone = -1;
// Time overlaps above this make the conflict lists too large to keep.
constexpr int64_t kMaxOverlapPairs = 4'000'000;

// The buffers of positive size, in alignment units, with their time sections.
struct Problem {
  std::vector<int32_t> index;                  // buffer index in the caller's list
  std::vector<int64_t> size;                   // units
  std::vector<int32_t> s_lo;                   // first section
  std::vector<int32_t> s_hi;                   // one past the last section
  std::vector<int64_t> width;                  // lifetime in steps
  std::vector<std::vector<int32_t>> overlaps;  // buffers overlapping in time
  std::vector<std::vector<int32_t>> section_buffers;
  int32_t sections = 0;
  bool too_large = false;
};

Problem MakeProblem(absl::Span<const BufferInterval> buffers, int64_t alignment) {
  Problem p;
  std::vector<int64_t> points;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0) continue;
    p.index.push_back(static_cast<int32_t>(i));
    p.size.push_back(AlignUp(buffers[i].size, alignment) / alignment);
    points.push_back(buffers[i].first);
    points.push_back(static_cast<int64_t>(buffers[i].last) + 1);
  }
  const size_t n = p.index.size();
  if (n > kExactSearchMaxBuffers) {
    p.too_large = true;
    return p;
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  p.sections = points.empty() ? 0 : static_cast<int32_t>(points.size()) - 1;
  p.section_buffers.resize(static_cast<size_t>(p.sections));
  p.s_lo.resize(n);
  p.s_hi.resize(n);
  p.width.resize(n);
  auto section_of = [&](int64_t t) {
    return static_cast<int32_t>(std::lower_bound(points.begin(), points.end(), t) - points.begin());
  };
  for (size_t i = 0; i < n; ++i) {
    const BufferInterval& b = buffers[static_cast<size_t>(p.index[i])];
    p.s_lo[i] = section_of(b.first);
    p.s_hi[i] = section_of(static_cast<int64_t>(b.last) + 1);
    p.width[i] = static_cast<int64_t>(b.last) - b.first + 1;
    for (int32_t s = p.s_lo[i]; s < p.s_hi[i]; ++s) {
      p.section_buffers[static_cast<size_t>(s)].push_back(static_cast<int32_t>(i));
    }
  }
  // Conflict lists: buffers that share a section overlap in time.
  p.overlaps.resize(n);
  int64_t pairs = 0;
  std::vector<int32_t> by_lo(n);
  for (size_t i = 0; i < n; ++i) by_lo[i] = static_cast<int32_t>(i);
  std::sort(by_lo.begin(), by_lo.end(), [&](int32_t a, int32_t b) {
    return p.s_lo[a] != p.s_lo[b] ? p.s_lo[a] < p.s_lo[b] : a < b;
  });
  for (size_t x = 0; x < n; ++x) {
    const int32_t a = by_lo[x];
    for (size_t y = x + 1; y < n && p.s_lo[by_lo[y]] < p.s_hi[a]; ++y) {
      const int32_t b = by_lo[y];
      p.overlaps[a].push_back(b);
      p.overlaps[b].push_back(a);
      if (++pairs > kMaxOverlapPairs) {
        p.too_large = true;
        return p;
      }
    }
  }
  return p;
}

enum class Status { kFound, kNotFound, kAborted, kDeadline };

struct Partition {
  std::vector<int32_t> buffers;
  int32_t s_lo, s_hi;  // section range
};

// One decision search: do the buffers fit in `capacity` units?
class DecisionSearch {
 public:
  DecisionSearch(const Problem& p, int64_t capacity, Clock::time_point deadline)
      : p_(p), capacity_(capacity), deadline_(deadline) {}

  Status Run(std::vector<int64_t>* solution) {
    const size_t n = p_.size.size();
    if (n == 0) {
      solution->clear();
      return Status::kFound;
    }
    // The preorders MiniMalloc rotates: W(idth), A(rea), T(otal of the busiest section); then
    // the same with random tie-breaks and perturbed keys (restarts cure the heavy tail of
    // depth-first search times). Seeded: runs are reproducible.
    static const char* const kHeuristics[] = {"WAT", "TAW", "TWA"};
    std::mt19937_64 rng(0x6f70726567);
    int64_t limit = static_cast<int64_t>(n);
    while (true) {
      limit *= 2;
      for (int round = 0; round < 6; ++round) {
        Reset();
        heuristic_ = kHeuristics[round % 3];
        noise_ = round < 3 ? 0 : rng();
        nodes_left_ = limit;
        Status status = Status::kFound;
        for (const Partition& part : InitialPartitions()) {
          status = SubSolve(part);
          if (status != Status::kFound) break;
        }
        if (status != Status::kAborted) {
          if (status == Status::kFound) *solution = solution_;
          return status;
        }
      }
    }
  }

  int64_t nodes() const { return nodes_; }

 private:
  struct Order {
    int64_t offset;
    int32_t rank;  // position in the partition's preorder
  };
  struct Change {
    int32_t index;
    int64_t value;
  };

  void Reset() {
    const size_t n = p_.size.size();
    offset_.assign(n, kNone);
    solution_.assign(n, kNone);
    min_offset_.assign(n, 0);
    floor_.assign(static_cast<size_t>(p_.sections), 0);
    total_.assign(static_cast<size_t>(p_.sections), 0);
    cuts_.assign(static_cast<size_t>(p_.sections), 0);
    section_stamp_.assign(static_cast<size_t>(p_.sections), 0);
    stamp_ = 0;
    for (size_t i = 0; i < n; ++i) {
      for (int32_t s = p_.s_lo[i]; s < p_.s_hi[i]; ++s)
        total_[static_cast<size_t>(s)] += p_.size[i];
      // cuts_[s]: buffers alive across the boundary between sections s and s + 1.
      for (int32_t s = p_.s_lo[i]; s + 1 < p_.s_hi[i]; ++s) ++cuts_[static_cast<size_t>(s)];
    }
  }

  std::vector<Partition> InitialPartitions() const {
    std::vector<Partition> parts;
    int32_t start = 0;
    for (int32_t s = 0; s < p_.sections; ++s) {
      if (s + 1 == p_.sections || cuts_[static_cast<size_t>(s)] == 0) {
        parts.push_back(Members(start, s + 1));
        start = s + 1;
      }
    }
    return parts;
  }

  // The unplaced buffers living in sections [lo, hi).
  Partition Members(int32_t lo, int32_t hi) const {
    Partition part{{}, lo, hi};
    for (size_t i = 0; i < p_.size.size(); ++i) {
      if (offset_[i] == kNone && p_.s_lo[i] < hi && lo < p_.s_hi[i]) {
        part.buffers.push_back(static_cast<int32_t>(i));
      }
    }
    return part;
  }

  // The largest section total over a buffer's sections.
  int64_t Total(int32_t b) const {
    int64_t t = 0;
    for (int32_t s = p_.s_lo[b]; s < p_.s_hi[b]; ++s)
      t = std::max(t, total_[static_cast<size_t>(s)]);
    return t;
  }

  Status SubSolve(const Partition& part) {
    if (part.buffers.empty()) return Status::kFound;
    struct Key {
      int64_t w, a, t;
      int32_t b;
    };
    std::vector<Key> keys;
    keys.reserve(part.buffers.size());
    std::mt19937_64 rng(noise_);
    // Perturbed keys: each scaled by a random factor in [0.75, 1.25).
    auto perturb = [&](int64_t v) {
      if (noise_ == 0) return v;
      return static_cast<int64_t>(static_cast<double>(v) *
                                  (0.75 + 0.5 * (rng() >> 11) * 0x1.0p-53));
    };
    for (int32_t b : part.buffers) {
      keys.push_back(
          {perturb(p_.width[b]), perturb(p_.width[b] * p_.size[b]), perturb(Total(b)), b});
    }
    const char* h = heuristic_;
    std::sort(keys.begin(), keys.end(), [h](const Key& x, const Key& y) {
      for (const char* c = h; *c != '\0'; ++c) {
        const int64_t vx = *c == 'W' ? x.w : *c == 'A' ? x.a : x.t;
        const int64_t vy = *c == 'W' ? y.w : *c == 'A' ? y.a : y.t;
        if (vx != vy) return vx > vy;
      }
      return x.b < y.b;
    });
    std::vector<int32_t> preorder(keys.size());
    std::vector<Order> ordering(keys.size());
    for (size_t r = 0; r < keys.size(); ++r) {
      preorder[r] = keys[r].b;
      ordering[r] = {0, static_cast<int32_t>(r)};
    }
    return Search(part, preorder, ordering, 0, 0);
  }

  Status Search(const Partition& part, const std::vector<int32_t>& preorder,
                const std::vector<Order>& previous, int64_t min_offset, int32_t min_rank) {
    if (nodes_left_-- <= 0) return Status::kAborted;
    if ((++nodes_ & 255) == 0 && Clock::now() > deadline_) return Status::kDeadline;
    std::vector<Order> ordering;
    ordering.reserve(previous.size());
    int64_t min_height = std::numeric_limits<int64_t>::max();
    for (const Order& o : previous) {
      const int32_t b = preorder[static_cast<size_t>(o.rank)];
      if (offset_[b] != kNone) continue;
      ordering.push_back({min_offset_[b], o.rank});
      min_height = std::min(min_height, min_offset_[b] + p_.size[b]);
    }
    if (ordering.empty()) {
      for (int32_t b : part.buffers) solution_[b] = offset_[b];
      return Status::kFound;
    }
    std::sort(ordering.begin(), ordering.end(), [](const Order& x, const Order& y) {
      return x.offset != y.offset ? x.offset < y.offset : x.rank < y.rank;
    });
    for (const Order& o : ordering) {
      const int32_t b = preorder[static_cast<size_t>(o.rank)];
      // Canonical order: offsets never decrease, ties by preorder rank.
      if (o.offset < min_offset || (o.offset == min_offset && o.rank < min_rank)) continue;
      // Dominance: a buffer placed at or above another one's lowest top leaves a gap that one
      // would fill.
      if (o.offset >= min_height) continue;
      if (o.offset + p_.size[b] > capacity_) continue;
      offset_[b] = o.offset;
      const size_t offset_mark = offset_log_.size(), floor_mark = floor_log_.size();
      const bool hatless = Place(b);
      Status status = Status::kNotFound;
      if (Feasible(part, o.offset)) status = Decompose(part, preorder, ordering, o, b);
      Undo(b, offset_mark, floor_mark);
      offset_[b] = kNone;
      if (status != Status::kNotFound) return status;
      // Nothing lies above b: no other choice here can do better.
      if (hatless) break;
    }
    return Status::kNotFound;
  }

  // Raises the lowest offsets of b's unplaced neighbours and the floors of its sections (and of
  // the sections whose buffers' lowest offsets rose). Returns whether b has no unplaced neighbour.
  bool Place(int32_t b) {
    const int64_t top = offset_[b] + p_.size[b];
    bool hatless = true;
    touched_.clear();
    ++stamp_;
    for (int32_t o : p_.overlaps[b]) {
      if (offset_[o] != kNone) continue;
      hatless = false;
      if (min_offset_[o] >= top) continue;
      offset_log_.push_back({o, min_offset_[o]});
      min_offset_[o] = top;
      for (int32_t s = p_.s_lo[o]; s < p_.s_hi[o]; ++s) {
        if (section_stamp_[static_cast<size_t>(s)] != stamp_) {
          section_stamp_[static_cast<size_t>(s)] = stamp_;
          touched_.push_back(s);
        }
      }
    }
    for (int32_t s = p_.s_lo[b]; s < p_.s_hi[b]; ++s) {
      floor_log_.push_back({s, floor_[static_cast<size_t>(s)]});
      floor_[static_cast<size_t>(s)] = top;
      total_[static_cast<size_t>(s)] -= p_.size[b];
    }
    // A section's floor is at least the lowest offset any of its unplaced buffers can take.
    for (int32_t s : touched_) {
      int64_t lowest = std::numeric_limits<int64_t>::max();
      for (int32_t o : p_.section_buffers[static_cast<size_t>(s)]) {
        if (offset_[o] == kNone) lowest = std::min(lowest, min_offset_[o]);
      }
      if (lowest != std::numeric_limits<int64_t>::max() &&
          floor_[static_cast<size_t>(s)] < lowest) {
        floor_log_.push_back({s, floor_[static_cast<size_t>(s)]});
        floor_[static_cast<size_t>(s)] = lowest;
      }
    }
    return hatless;
  }

  void Undo(int32_t b, size_t offset_mark, size_t floor_mark) {
    while (floor_log_.size() > floor_mark) {
      floor_[static_cast<size_t>(floor_log_.back().index)] = floor_log_.back().value;
      floor_log_.pop_back();
    }
    while (offset_log_.size() > offset_mark) {
      min_offset_[static_cast<size_t>(offset_log_.back().index)] = offset_log_.back().value;
      offset_log_.pop_back();
    }
    for (int32_t s = p_.s_lo[b]; s < p_.s_hi[b]; ++s) total_[static_cast<size_t>(s)] += p_.size[b];
  }

  // Section inference: every section must hold its unplaced buffers above its floor (and above
  // the current offset, since later buffers are never placed lower).
  bool Feasible(const Partition& part, int64_t offset) const {
    for (int32_t s = part.s_lo; s < part.s_hi; ++s) {
      const size_t i = static_cast<size_t>(s);
      if (std::max(offset, floor_[i]) + total_[i] > capacity_) return false;
    }
    return true;
  }

  // After placing b: splits the partition where no unplaced buffer crosses a section boundary
  // any more, and solves the pieces independently.
  Status Decompose(const Partition& part, const std::vector<int32_t>& preorder,
                   const std::vector<Order>& ordering, const Order& o, int32_t b) {
    solution_[b] = offset_[b];
    std::vector<int32_t> cutpoints = {part.s_lo};
    for (int32_t s = p_.s_lo[b]; s + 1 < p_.s_hi[b]; ++s) {
      if (--cuts_[static_cast<size_t>(s)] == 0 && s + 1 > part.s_lo && s + 1 < part.s_hi) {
        cutpoints.push_back(s + 1);
      }
    }
    Status status = Status::kFound;
    if (cutpoints.size() == 1) {
      status = Search(part, preorder, ordering, o.offset, o.rank);
    } else {
      cutpoints.push_back(part.s_hi);
      for (size_t c = 1; c < cutpoints.size() && status == Status::kFound; ++c) {
        Partition piece{{}, cutpoints[c - 1], cutpoints[c]};
        for (int32_t x : part.buffers) {
          if (offset_[x] == kNone && p_.s_lo[x] < piece.s_hi && piece.s_lo < p_.s_hi[x]) {
            piece.buffers.push_back(x);
          }
        }
        status = SubSolve(piece);
      }
    }
    for (int32_t s = p_.s_lo[b]; s + 1 < p_.s_hi[b]; ++s) ++cuts_[static_cast<size_t>(s)];
    return status;
  }

  const Problem& p_;
  const int64_t capacity_;
  const Clock::time_point deadline_;
  const char* heuristic_ = "WAT";
  uint64_t noise_ = 0;  // 0: exact keys; else the seed of the key perturbation
  int64_t nodes_left_ = 0;
  int64_t nodes_ = 0;
  std::vector<int64_t> offset_, solution_, min_offset_, floor_, total_;
  std::vector<int32_t> cuts_;
  std::vector<Change> offset_log_, floor_log_;
  std::vector<int32_t> touched_;
  std::vector<uint64_t> section_stamp_;  // == stamp_: already in touched_
  uint64_t stamp_ = 0;
};

Clock::time_point DeadlineAfter(double ms) {
  return Clock::now() + std::chrono::microseconds(static_cast<int64_t>(std::max(ms, 0.0) * 1e3));
}

// Runs one decision search over a prepared problem; on success, sets `found` to the placement
// in bytes (offsets, arena_bytes, strategy "exact"), verified.
ExactSearchOutcome Decide(const Problem& p, absl::Span<const BufferInterval> buffers,
                          int64_t alignment, int64_t capacity_units, Clock::time_point deadline,
                          Placement* found, int64_t* nodes) {
  if (p.too_large) return ExactSearchOutcome::kTooLarge;
  DecisionSearch search(p, capacity_units, deadline);
  std::vector<int64_t> units;
  const Status status = search.Run(&units);
  if (nodes != nullptr) *nodes += search.nodes();
  if (status == Status::kDeadline) return ExactSearchOutcome::kBudget;
  if (status == Status::kNotFound) return ExactSearchOutcome::kInfeasible;
  found->offsets.assign(buffers.size(), 0);
  found->arena_bytes = 0;
  found->strategy = "exact";
  for (size_t i = 0; i < units.size(); ++i) {
    const size_t b = static_cast<size_t>(p.index[i]);
    found->offsets[b] = units[i] * alignment;
    found->arena_bytes = std::max(found->arena_bytes, (units[i] + p.size[i]) * alignment);
  }
  const absl::Status valid = VerifyPlacement(buffers, *found, alignment);
  OPREG_CHECK(valid.ok(), "exact placement search: internal error, the placement found does ",
              "not verify: ", valid.message());
  return ExactSearchOutcome::kFound;
}

}  // namespace

const char* ExactSearchOutcomeName(ExactSearchOutcome outcome) {
  switch (outcome) {
    case ExactSearchOutcome::kFound:
      return "found";
    case ExactSearchOutcome::kInfeasible:
      return "infeasible";
    case ExactSearchOutcome::kBudget:
      return "budget";
    case ExactSearchOutcome::kTooLarge:
      return "too large";
  }
  return "?";
}

ExactSearchOutcome FindPlacementWithin(absl::Span<const BufferInterval> buffers, int64_t alignment,
                                       int64_t capacity_bytes, double budget_ms,
                                       Placement* placement, int64_t* nodes) {
  const absl::Status valid = ValidateBuffers(buffers, alignment);
  OPREG_CHECK_VALUE(valid.ok(), "FindPlacementWithin: ", valid.message());
  OPREG_CHECK_VALUE(capacity_bytes >= 0, "FindPlacementWithin: capacity ", capacity_bytes,
                    " is negative");
  const Clock::time_point deadline = DeadlineAfter(budget_ms);
  if (nodes != nullptr) *nodes = 0;
  const Problem p = MakeProblem(buffers, alignment);
  return Decide(p, buffers, alignment, capacity_bytes / alignment, deadline, placement, nodes);
}

void ImprovePlacementExactly(absl::Span<const BufferInterval> buffers, int64_t alignment,
                             double budget_ms, Placement* placement) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = DeadlineAfter(budget_ms);
  const int64_t lb = LowerBoundBytes(buffers, alignment);
  placement->search_nodes = 0;
  auto finish = [&](const char* search) {
    placement->search = search;
    placement->search_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  if (placement->arena_bytes <= lb) {
    placement->optimal_by = "lower bound";
    finish("optimal");
    return;
  }
  const Problem p = MakeProblem(buffers, alignment);
  if (p.too_large) {
    finish("too large");
    return;
  }
  // Capacities in units: lo is the smallest not yet shown infeasible, best the best found.
  int64_t lo = lb / alignment;
  int64_t best = placement->arena_bytes / alignment;
  bool proven = true;  // every capacity below lo was shown infeasible
  bool first = true;   // the lower bound is tried first
  Placement found;
  while (lo < best) {
    // The lower bound first (often feasible, and then optimal at once), then bisection.
    const int64_t capacity = first ? lo : lo + (best - 1 - lo) / 2;
    // Each decision gets half of what is left (the last possible one all of it): the lower
    // bound, which hard instances often reach, half the budget; when it is infeasible, proving
    // so can take long, and the bisection still has the other half.
    const auto now = Clock::now();
    const Clock::time_point slice = capacity == best - 1 ? deadline : now + (deadline - now) / 2;
    first = false;
    const ExactSearchOutcome outcome =
        Decide(p, buffers, alignment, capacity, slice, &found, &placement->search_nodes);
    if (outcome == ExactSearchOutcome::kFound) {
      best = found.arena_bytes / alignment;
      placement->offsets = std::move(found.offsets);
      placement->arena_bytes = found.arena_bytes;
      placement->strategy = "exact";
    } else {
      // Infeasible: proven. At the budget: not proven, but look higher (easier) while time lasts.
      if (outcome != ExactSearchOutcome::kInfeasible) proven = false;
      lo = capacity + 1;
    }
    if (Clock::now() >= deadline) break;
  }
  if (lo >= best && proven) {
    placement->optimal_by = placement->arena_bytes == lb ? "lower bound" : "search";
    finish("optimal");
  } else {
    finish("budget");
  }
}

}  // namespace opreg
