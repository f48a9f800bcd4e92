// Offsets in one arena for buffers with known lifetimes (the placement step of the graph memory
// planner), the lower bound it is measured against, and the allocator baselines it is compared
// with. Facts and sources: shared/reference/memory_planning.md (sections 1.2-1.4, 2, 3, 6, 7.3,
// 7.4); the trace format of `opreg plan`: docs/trace_format.md.
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
//   NaivePeakBytes         eager execution with an exact-size allocator: the bytes held at the
//                          worst step, sizes not rounded.
//   NoReusePeakBytes       nothing ever freed: the sum of all sizes ("naive" of the reference's
//                          tables, TFLite's "no sharing").
//   CachingAllocatorPeakBytes / SimulateCachingAllocator
//                          eager execution through a model of PyTorch's CUDACachingAllocator.
//   ExactSizeReusePeakBytes / SimulateExactSizeReuse
//                          Inductor's wrapper reuse (exact-size keys, LIFO) with the PR #159530
//                          "don't reuse a buffer if that raises the peak" rule.
//   SummarizeTrace         all of the above for one trace (`opreg plan`, bench_planner).
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
};

struct Placement {
  std::vector<int64_t> offsets;  // per buffer (same order as the input), multiples of alignment
  // max over buffers of offset + size rounded up to the alignment (0 for no buffers). A multiple
  // of the alignment, and >= LowerBoundBytes(buffers, alignment).
  int64_t arena_bytes = 0;
  // The portfolio member that won: "size", "lifetime", "area", "online" or "two-level" ("" for
  // no buffers).
  std::string strategy;
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
// Zero-size buffers get offset 0 and occupy nothing. Cost: O(n log n + E log d) per member, E the
// number of time-overlapping pairs (a conflict graph built once); above 8M pairs it switches to a
// memory-lean O(n^2) scan. 10,000 buffers of a model-like trace take a few ms (bench_planner).
// The result always passes VerifyPlacement, and arena_bytes <= the sum of the aligned sizes.
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

// ---- Baselines: peak bytes held over the trace, op by op --------------------------------------

// Eager execution with a fresh exact-size allocation per buffer at its first step, freed after its
// last step: max over steps of the sum of the live sizes, not rounded (== LowerBoundBytes(b, 1)).
// A real allocator's peak is at least this.
int64_t NaivePeakBytes(absl::Span<const BufferInterval> b);

// No reuse at all: every buffer allocated and never freed, i.e. the sum of all sizes.
int64_t NoReusePeakBytes(absl::Span<const BufferInterval> b);

struct CachingAllocatorStats {
  int64_t reserved_peak = 0;   // bytes in segments (never released, so also the final reserved)
  int64_t allocated_peak = 0;  // max over time of the sum of the rounded sizes in use
  int64_t segments = 0;        // device allocations (cudaMalloc calls)
};

// Eager execution through a model of PyTorch's CUDACachingAllocator (c10/cuda/
// CUDACachingAllocator.cpp, default config: no PYTORCH_CUDA_ALLOC_CONF, one stream, no
// empty_cache, no OOM). Per step: allocate the step's new buffers in input order, then free the
// buffers whose last step it is. The model:
//   * round_size: 0 bytes allocates nothing; below 512 B -> 512 B; else up to a multiple of 512.
//   * pools: small for rounded sizes <= 1 MiB, large otherwise.
//   * get_free_block: best fit, the smallest cached block of the pool with size >= request
//     (ties: lowest address).
//   * no fit -> a new segment (cudaMalloc) of get_allocation_size: 2 MiB for small requests,
//     20 MiB for requests < 10 MiB, else the request rounded up to 2 MiB.
//   * split: the remainder of the block becomes a free block when it is >= 512 B (small pool) or
//     > 1 MiB (large pool); otherwise the whole block is handed out.
//   * free: the block is merged with free neighbours of its segment and returned to its pool.
//   * segments are never freed; the peak of reserved bytes is the final reserved bytes.
// Treat it as a model (reference section 6); re-measure on a GPU where one is available.
CachingAllocatorStats SimulateCachingAllocator(absl::Span<const BufferInterval> b);

// SimulateCachingAllocator(b).reserved_peak.
int64_t CachingAllocatorPeakBytes(absl::Span<const BufferInterval> b);

struct ExactSizeReuseStats {
  int64_t peak_bytes = 0;     // max over steps of the bytes held, reuse extensions included
  int64_t baseline_peak = 0;  // NaivePeakBytes: the same without any reuse
  int64_t reused = 0;         // allocations served from the reuse pool (allocations avoided)
};

// Inductor's wrapper-level buffer reuse (codegen/wrapper.py): a buffer freed after its last step
// f enters reuse_pool[size] (exact size, the key of buffer_reuse_key); an allocation of the same
// size at step a > f pops the newest entry (LIFO). Reusing keeps the old storage allocated over
// the steps f+1 .. a-1 between the two buffers, which can raise the peak. With `peak_rule`
// (PR #159530, the default everywhere) the top candidate is reused iff a == f + 1 or
// size + max(mem[f+1 .. a-1]) <= baseline peak, where mem is the per-step timeline of bytes held
// kept in a lazy segment tree (range add, range max); on reuse mem[f+1 .. a-1] += size. On
// refusal the candidate stays in the pool and a fresh allocation is made. Without the rule every
// pop is accepted (the pre-2025 behaviour). Sizes are not rounded.
ExactSizeReuseStats SimulateExactSizeReuse(absl::Span<const BufferInterval> b,
                                           bool peak_rule = true);

// SimulateExactSizeReuse(b, /*peak_rule=*/true).peak_bytes; always == NaivePeakBytes(b).
int64_t ExactSizeReusePeakBytes(absl::Span<const BufferInterval> b);

// ---- Report ----------------------------------------------------------------------------------

// Every figure of one trace, for `opreg plan` and bench_planner.
struct TraceSummary {
  int64_t buffers = 0;
  int64_t steps = 0;  // max last + 1
  int64_t alignment = 64;
  int64_t no_reuse_bytes = 0;       // NoReusePeakBytes ("naive" column)
  int64_t eager_bytes = 0;          // NaivePeakBytes
  CachingAllocatorStats caching;    // SimulateCachingAllocator
  ExactSizeReuseStats reuse;        // SimulateExactSizeReuse with the peak rule
  int64_t reuse_no_rule_bytes = 0;  // SimulateExactSizeReuse without it
  int64_t arena_bytes = 0;          // PlaceBuffers
  int64_t lb_bytes = 0;             // LowerBoundBytes at the same alignment
  std::string strategy;             // the winning portfolio member
  double plan_ms = 0;               // wall time of PlaceBuffers (best of `timing_runs`)
  bool verified = false;            // VerifyPlacement said OK
  Placement placement;
};

// Runs every function above on one trace (PlaceBuffers `timing_runs` >= 1 times, keeping the
// fastest time). Throws opreg::Error (kValue) on invalid buffers like the rest.
TraceSummary SummarizeTrace(absl::Span<const BufferInterval> buffers, int64_t alignment = 64,
                            int timing_runs = 1);

}  // namespace opreg
