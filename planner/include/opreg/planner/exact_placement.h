// The exact placement mode of the memory planner: a branch-and-bound search for the smallest
// arena (dynamic storage allocation, NP-hard in general), run after the heuristic portfolio of
// PlaceBuffers when a time budget is given (PlacementOptions::budget_ms, `opreg plan
// --budget-ms`, PlanOptions::budget_ms, Python's `plan_budget_ms`).
//
// Method (the ideas of MiniMalloc, Moffitt, ASPLOS 2024; docs/reference/memory_planning.md):
// a decision search "do the buffers fit in capacity C?" that places buffers bottom-up in a
// canonical order (non-decreasing offset, ties by a static preorder), each at the lowest offset
// its already-placed time neighbours allow; it prunes a partial placement when some time section
// cannot hold the buffers still to place above its floor (section inference), when a choice would
// leave a gap another buffer fits in (dominance), and after a choice that constrains no other
// buffer (nothing above it); it splits the problem wherever no unplaced buffer crosses a point
// in time (dynamic decomposition), and rotates three static preorders with doubling node limits.
// The optimizer asks the decision search for C = the lower bound first, then bisects between the
// best arena known and the highest capacity shown infeasible.
//
// Errors: invalid buffers or alignment throw opreg::Error (kValue), as PlaceBuffers does.
// Thread safety: pure functions; concurrent calls are safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "opreg/planner/memory_placement.h"

namespace opreg {

// How the decision search for one capacity ended.
enum class ExactSearchOutcome {
  kFound,       // a placement within the capacity
  kInfeasible,  // proven: no placement fits
  kBudget,      // stopped at the deadline
  kTooLarge,    // not searched: more buffers or time overlaps than the search takes
};

// "found", "infeasible", "budget" or "too large".
const char* ExactSearchOutcomeName(ExactSearchOutcome outcome);

// The search takes at most this many buffers of positive size (its memory grows with n^2).
constexpr size_t kExactSearchMaxBuffers = 2048;

// A placement within `capacity_bytes` (rounded down to a multiple of `alignment`): on kFound,
// `placement` gets its offsets, arena_bytes (<= the capacity) and strategy "exact", verified;
// otherwise the outcome says why none came back. `nodes`, when given, receives the number of
// search nodes visited.
ExactSearchOutcome FindPlacementWithin(absl::Span<const BufferInterval> buffers, int64_t alignment,
                                       int64_t capacity_bytes, double budget_ms,
                                       Placement* placement, int64_t* nodes = nullptr);

// Improves `placement` (a valid placement of `buffers`, PlaceBuffers' result) with the exact
// search for up to `budget_ms`: sets its offsets, arena_bytes and strategy ("exact") when the
// search finds a smaller arena, and its `optimality` and `search` fields in every case. The
// result always passes VerifyPlacement.
void ImprovePlacementExactly(absl::Span<const BufferInterval> buffers, int64_t alignment,
                             double budget_ms, Placement* placement);

}  // namespace opreg
