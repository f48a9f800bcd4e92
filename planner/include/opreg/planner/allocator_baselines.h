// Allocator baselines a memory plan is compared with, and the per-trace report of `opreg plan`
// and bench_planner. Not part of the runtime planner (opreg::planner): these model what other
// allocators would hold on the same trace, for comparison only (library opreg::planner_baselines).
//
//   NaivePeakBytes         eager execution with an exact-size allocator: the bytes held at the
//                          worst step, sizes not rounded.
//   NoReusePeakBytes       nothing ever freed: the sum of all sizes ("naive" of the reference's
//                          tables, TFLite's "no sharing").
//   CachingAllocatorPeakBytes / SimulateCachingAllocator
//                          eager execution through a model of PyTorch's CUDACachingAllocator.
//   ExactSizeReusePeakBytes / SimulateExactSizeReuse
//                          Inductor's wrapper reuse (exact-size keys, LIFO) with the PR #159530
//                          "don't reuse a buffer if that raises the peak" rule.
//   SummarizeTrace         all of the above and PlaceBuffers for one trace.
//
// Errors: invalid buffers (see memory_placement.h) throw opreg::Error (kValue) naming the buffer.
// Thread safety: every function is pure; concurrent calls are safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "opreg/planner/memory_placement.h"

namespace opreg {

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
// fastest time; once when a run takes over 100 ms). Throws opreg::Error (kValue) on invalid buffers like the rest.
TraceSummary SummarizeTrace(absl::Span<const BufferInterval> buffers, int64_t alignment = 64,
                            int timing_runs = 1);

}  // namespace opreg
