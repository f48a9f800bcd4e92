// Offsets in one arena for buffers with known lifetimes (the placement step of the graph memory
// planner) and the lower bound it is measured against. The allocator baselines it is compared
// with (caching allocator, exact-size reuse, the trace report) are in allocator_baselines.h.
// Facts and sources: docs/reference/memory_planning.md (sections 1.2-1.4, 2, 3, 6, 7.3, 7.4);
// the trace format of `opreg plan`: docs/trace_format.md.
//
// Model. A trace is a list of buffers; buffer i holds `size` bytes from step `first` to step
// `last`, both inclusive (TFLite's TensorUsageRecord, our planner's [def_step, max use step]).
// Two buffers overlap in time iff a.first <= b.last && b.first <= a.last; such buffers must not
// overlap in space. Steps are op indices: at step t the op allocates its outputs (buffers with
// first == t) before it runs and frees the buffers with last == t after it runs.
//
// What each function is for:
//   LowerBoundBytes        the LB: max over steps of the live bytes (sizes rounded up to the
//                          alignment). No placement can be smaller (DSA "LOAD").
//   PlaceBuffers           the planner's placement: a portfolio of greedy heuristics, best kept.
//   VerifyPlacement        the static checker the planner runs on every plan (debug builds) and
//                          the tests run on every placement.
//
// Errors. Every function taking buffers requires, for each buffer, size >= 0 and
// 0 <= first <= last, and alignment >= 1 (any positive value; offsets are multiples of it). A
// violation throws opreg::Error (ErrorKind::kValue) naming the buffer. ValidateBuffers reports the
// same conditions as a Status for callers that want one (the trace-file reader does).
// VerifyPlacement never throws; it returns a Status describing the first violation.
//
// Thread safety: every function is pure (no global state); concurrent calls are safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace opreg {

// One buffer of a trace: `size` bytes live from step `first` to step `last`, both inclusive.
struct BufferInterval {
  int64_t size;
  int32_t first;
  int32_t last;
};

struct PlacementOptions {
  // Every offset is a multiple of this and every buffer occupies its size rounded up to it.
  // 64 is Inductor's ALIGN_BYTES; use 512 to mirror the CUDA caching allocator's rounding, 1 for
  // byte-exact packing (the Pisarchyk & Lee example).
  int64_t alignment = 64;
  // 0: the heuristic portfolio only (a few ms). > 0: then the exact search (exact_placement.h)
  // for up to this many milliseconds, stopping early at a proven optimum. The heuristics then
  // take at most half of it, and the whole call about this long (plus the online member).
  double budget_ms = 0;
  // Time limit of the greedy members ("size", "lifetime", "area"), whose cost grows with the
  // number of time-overlapping pairs (n^2 / 2 when every buffer overlaps every other). A member
  // still running at the limit is dropped (Placement::members_stopped counts them); "online"
  // and "two-level" always run to the end (O(n log n)). 1 s by default: model traces of 10,000
  // buffers finish all members in a few ms; 100,000 mutually overlapping buffers would take
  // minutes. 0: the greedy members do not run.
  double heuristic_ms = 1000;
};

struct Placement {
  std::vector<int64_t> offsets;  // per buffer (same order as the input), multiples of alignment
  // max over buffers of offset + size rounded up to the alignment (0 for no buffers). A multiple
  // of the alignment, and >= LowerBoundBytes(buffers, alignment).
  int64_t arena_bytes = 0;
  // The portfolio member that won: "size", "lifetime", "area", "online" or "two-level" ("" for
  // no buffers), or "exact" when the exact search found a smaller arena.
  std::string strategy;
  // Why arena_bytes is known to be minimal: "lower bound" (it equals LowerBoundBytes), "search"
  // (the exact search showed that no smaller arena fits), or "" (not proven).
  std::string optimal_by;
  // What the exact search did: "" (not run: budget_ms == 0), "optimal" (it stopped at a proven
  // optimum), "budget" (it stopped at its budget; the best arena found is kept) or "too large"
  // (more than kExactSearchMaxBuffers buffers, or too many time overlaps: not searched).
  std::string search;
  int64_t search_nodes = 0;  // decision-search nodes visited
  int members_stopped = 0;   // greedy members dropped at PlacementOptions::heuristic_ms
  double search_ms = 0;      // time spent in the exact search
};

// OK, or InvalidArgument naming the first buffer with size < 0, first < 0 or first > last, or the
// bad alignment (< 1).
absl::Status ValidateBuffers(absl::Span<const BufferInterval> buffers, int64_t alignment = 1);

// Rounds `size` up to a multiple of `alignment` (>= 1).
inline int64_t AlignUp(int64_t size, int64_t alignment) {
  return (size + alignment - 1) / alignment * alignment;
}

// LB: max over steps of the sum of the live sizes, each rounded up to `alignment`. 0 for no
// buffers. O(n log n).
int64_t LowerBoundBytes(absl::Span<const BufferInterval> buffers, int64_t alignment);

// Offsets in one arena. Runs, and keeps the smallest arena of (ties: the earlier one):
//   "size"      greedy by size: buffers in decreasing size order, each placed in the smallest gap
//               between the already-placed buffers that overlap it in time, or on top of them
//               when no gap fits (TFLite's GreedyBySizeAssignment / SimpleMemoryArena, Pisarchyk
//               & Lee 2020 Alg. 3). Ties: earlier first step, then input order.
//   "lifetime"  the same rule, decreasing live length (last - first + 1), then size.
//   "area"      the same rule, decreasing size x live length, then size.
//   "online"    ORT-style best fit in execution order: walk the steps, free the buffers that died,
//               then place each new buffer (input order) in the smallest gap between the buffers
//               alive now, or on top of them.
//   "two-level" only for chains (at most two buffers of positive size alive at any step): the
//               conflict graph is then a forest; one colour at offset 0, the other flush with the
//               top of an LB-sized arena. Exact (arena == LB) where greedy orders can miss.
// Zero-size buffers get offset 0 and occupy nothing. Cost: O(n log n) for "online" and
// "two-level"; O(n log n + E log d) for each greedy member, E the number of time-overlapping
// pairs (a conflict graph built once; above 8M pairs a memory-lean O(n^2) scan instead), cut off
// at options.heuristic_ms. 10,000 buffers of a model-like trace take a few ms (bench_planner).
// The result always passes VerifyPlacement, and arena_bytes <= the sum of the aligned sizes.
// With options.budget_ms > 0 the exact search then tries to lower the arena (exact_placement.h);
// `optimal_by` and `search` say what is proven.
Placement PlaceBuffers(absl::Span<const BufferInterval> buffers,
                       const PlacementOptions& options = {});

// Checks a placement against its buffers: one offset per buffer, each offset >= 0 and a multiple
// of `alignment`, offset + size <= arena_bytes, and no two buffers that overlap in time overlap
// in [offset, offset + size) (raw sizes; zero-size buffers never collide). Returns OK or
// FailedPrecondition naming the buffer(s), e.g. "buffers 3 (size 64, steps 1..4, offset 0) and 5
// (size 32, steps 4..6, offset 32) overlap in time and space". Invalid buffers or alignment:
// InvalidArgument. O(n log n).
absl::Status VerifyPlacement(absl::Span<const BufferInterval> buffers, const Placement& p,
                             int64_t alignment);

}  // namespace opreg
