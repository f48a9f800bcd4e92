// Memory planning of a recorded graph: which storage each value lives in, how long, and where
// in one arena.
//
// Liveness is over storages: union-find joins a view (or an in-place return) to the storage of
// the argument it aliases; a mutation (`Tensor(a!)`) is a use of the storage, not a new one, so
// the storage lives to the last use of any alias. Graph inputs and outputs never go to the arena
// (outputs are handed to the caller). A value nobody uses dies at its own step, so a dead output
// of a multi-output op is freed right away.
//
// Storage kinds:
//   arena    produced by an op that writes into given buffers (a functional op with an out
//            variant): a slot of the arena at a planned offset;
//   runtime  produced by an op that allocates its own outputs (no out variant, a mutating op's
//            fresh outputs, data-dependent sizes): allocated when it runs, released after its
//            last use; its planned size is the meta function's estimate (an upper bound for
//            data-dependent ops) so that peak accounting stays conservative;
//   input, output, alias (shares another value's storage).
//
// Placement is PlaceBuffers (memory_placement.h): greedy by size under several orders plus an
// online best fit, best kept. The arena is used only if it is no larger than the peak of running
// the graph op by op with a fresh allocation per output (`eager_peak_bytes`); otherwise (never
// seen on model graphs) intermediates are allocated at run time instead.
//
// Thread safety: plans are immutable values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opreg/planner/graph.h"
#include "opreg/planner/memory_placement.h"

namespace opreg {

enum class VerifyMode { kOff, kLog, kAssert };

struct PlanOptions {
  // Offsets and sizes in the arena are multiples of this (64 on CPU, as PyTorch Inductor's
  // ALIGN_BYTES).
  int64_t alignment = 64;
  // Checks of each replay (planned_executor.h). With kLog or kAssert every slot is followed by
  // `alignment` guard bytes that the executor checks after each op.
  VerifyMode verify = VerifyMode::kOff;
  // > 0: after the heuristics, search for the smallest arena for up to this many milliseconds
  // (the exact mode of memory_placement.h / exact_placement.h), once per input signature: a
  // PlannedExecutor caches the plan, so replays on inputs of a planned shape never search.
  double budget_ms = 0;
};

enum class StorageKind {
  kInput,
  kArena,
  kRuntime,
  kOutput,
  // A registered symmetric-memory out (symmetric_memory_hooks.h): allocated from its group's
  // symmetric heap when the plan is made (a collective step), kept with the plan.
  kSymmetric,
};

// How a node runs when the graph is replayed.
enum class NodeExecution {
  kOutVariant,  // its out variant's kernel, writing into planned buffers
  kDirect,      // the op itself (views, in-place ops, ops that allocate their outputs)
};

struct StorageGroup {
  Value root;  // the value that owns the storage
  StorageKind kind;
  int64_t bytes = 0;    // the storage size of `root`
  int32_t first = 0;    // step that creates it (inclusive)
  int32_t last = 0;     // last step that uses any alias of it (inclusive)
  int64_t offset = -1;  // arena offset, for kArena
  // For symmetric-memory outs (kSymmetric, or kOutput): the group whose heap holds them.
  std::string heap_group;
};

struct MemoryPlan {
  std::vector<ValueInfo> values;        // every value's spec for this plan's input shapes
  std::vector<int32_t> group_of_value;  // value id -> index into groups
  std::vector<StorageGroup> groups;
  std::vector<NodeExecution> execution;   // per node
  std::vector<OutVariantLink> out_links;  // per node, for kOutVariant nodes
  // Per step, the groups whose last use is that step (released after it).
  std::vector<std::vector<int32_t>> release_after;

  bool use_arena = true;
  int64_t arena_bytes = 0;       // arena size (guard bytes included when verifying)
  int64_t lb_bytes = 0;          // max over steps of live arena-group bytes (aligned)
  int64_t eager_peak_bytes = 0;  // op by op, fresh allocation per output (inputs excluded)
  int64_t naive_bytes = 0;       // sum of every intermediate's bytes (no reuse at all)
  int64_t guard_bytes = 0;       // per slot
  std::string strategy;          // the placement order that won ("exact": the exact search)
  std::string optimal_by;        // Placement::optimal_by: "lower bound", "search" or ""
  std::string search;            // Placement::search: "", "optimal", "budget", "too large"
  double plan_ms = 0;

  // "arena 1.5 MiB = LB 1.5 MiB (1.000x), eager peak 2.0 MiB, naive 4.1 MiB, 7 slots, ..."
  std::string Summary() const;
};

// Plans `graph` for values with the given specs (Graph::values(), or Graph::Propagate(...)).
MemoryPlan PlanMemory(const Graph& graph, const std::vector<ValueInfo>& values,
                      const PlanOptions& options = {});

}  // namespace opreg
