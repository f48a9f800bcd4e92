// The exact placement mode: the optimum on random instances with a known optimum (guillotine
// cuts of a W x T rectangle, so a perfect placement of width W exists and LB = W), the optimum of
// small random instances checked against a brute force, proofs of infeasibility, and the fields
// that say what is proven.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <numeric>
#include <random>

#include "opreg/core/error.h"
#include "opreg/planner/exact_placement.h"
#include "opreg/planner/memory_placement.h"
#include "planner_traces.h"

namespace {

using opreg::BufferInterval;
using opreg::ExactSearchOutcome;
using opreg::Placement;

// The smallest arena by brute force: first fit (lowest free offset) over every order. Some order
// reaches the optimum: place an optimal placement's buffers by offset and none moves up.
int64_t BruteForceOptimum(const std::vector<BufferInterval>& b) {
  std::vector<size_t> order(b.size());
  std::iota(order.begin(), order.end(), 0);
  int64_t best = std::numeric_limits<int64_t>::max();
  do {
    std::vector<int64_t> off(b.size(), -1);
    int64_t arena = 0;
    for (size_t i : order) {
      int64_t o = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (size_t j = 0; j < b.size(); ++j) {
          if (off[j] < 0 || b[j].last < b[i].first || b[i].last < b[j].first) continue;
          if (o < off[j] + b[j].size && off[j] < o + b[i].size) {
            o = off[j] + b[j].size;
            moved = true;
          }
        }
      }
      off[i] = o;
      arena = std::max(arena, o + b[i].size);
    }
    best = std::min(best, arena);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

TEST_CASE("exact mode reaches W on guillotine instances with a known optimum", "[exact]") {
  // Depth 7: up to 128 buffers. Deeper cuts make instances that MiniMalloc's search (and this
  // one) often cannot finish in minutes: depth-first search has a heavy tail there. The search is
  // deterministic (seeded restarts), so the work per instance is fixed; optimized builds run 40
  // instances (the slowest, #21, needs 1.6M nodes: 1.6 s on the 2-core CI machine), unoptimized
  // sanitizer builds, some 50x slower per node, the first 20 (each under 20k nodes).
#ifdef NDEBUG
  constexpr int kInstances = 40;
#else
  constexpr int kInstances = 20;
#endif
  constexpr double kBudgetMs = 60000;
  double heuristic_ratio_sum = 0, heuristic_ratio_max = 1;
  int heuristic_at_lb = 0;
  for (int k = 0; k < kInstances; ++k) {
    const opreg::bench::Trace trace = opreg::bench::Guillotine(1000 + static_cast<uint64_t>(k), 7);
    const std::vector<BufferInterval>& buffers = trace.buffers;
    // The rectangle's width: the live bytes at step 0 (every step is fully covered).
    int64_t width = 0;
    for (const BufferInterval& b : buffers) width += b.first == 0 ? b.size : 0;
    INFO("instance " << k << ": " << buffers.size() << " buffers, W " << width);
    REQUIRE(opreg::LowerBoundBytes(buffers, 1) == width);
    const Placement heuristic = opreg::PlaceBuffers(buffers, {1});
    const double ratio = static_cast<double>(heuristic.arena_bytes) / static_cast<double>(width);
    heuristic_ratio_sum += ratio;
    heuristic_ratio_max = std::max(heuristic_ratio_max, ratio);
    heuristic_at_lb += heuristic.arena_bytes == width;
    CHECK(heuristic.search.empty());
    const Placement exact = opreg::PlaceBuffers(buffers, {1, kBudgetMs});
    CHECK(exact.arena_bytes == width);
    CHECK(exact.optimal_by == "lower bound");
    CHECK(exact.search == "optimal");
    CHECK(opreg::VerifyPlacement(buffers, exact, 1).ok());
  }
  std::printf(
      "guillotine instances: heuristic arena/W mean %.3f, max %.3f, at W on %d of %d; "
      "exact mode at W on all\n",
      heuristic_ratio_sum / kInstances, heuristic_ratio_max, heuristic_at_lb, kInstances);
}

TEST_CASE("exact mode finds the optimum of small instances, and proves it", "[exact]") {
  std::mt19937_64 rng(7);
  int above_lb = 0;
  for (int k = 0; k < 150; ++k) {
    const size_t n = 3 + rng() % 5;
    std::vector<BufferInterval> buffers;
    for (size_t i = 0; i < n; ++i) {
      const int32_t first = static_cast<int32_t>(rng() % 6);
      buffers.push_back(
          {1 + static_cast<int64_t>(rng() % 9), first, first + static_cast<int32_t>(rng() % 4)});
    }
    INFO("instance " << k);
    const int64_t optimum = BruteForceOptimum(buffers);
    const int64_t lb = opreg::LowerBoundBytes(buffers, 1);
    above_lb += optimum > lb;
    const Placement exact = opreg::PlaceBuffers(buffers, {1, 10000});
    CHECK(exact.arena_bytes == optimum);
    CHECK(exact.search == "optimal");
    CHECK(exact.optimal_by == (optimum == lb ? "lower bound" : "search"));
    CHECK(opreg::VerifyPlacement(buffers, exact, 1).ok());
    // The decision search agrees on both sides of the optimum.
    Placement found;
    CHECK(opreg::FindPlacementWithin(buffers, 1, optimum, 10000, &found) ==
          ExactSearchOutcome::kFound);
    CHECK(opreg::FindPlacementWithin(buffers, 1, optimum - 1, 10000, &found) ==
          ExactSearchOutcome::kInfeasible);
  }
  std::printf("small instances: %d of 150 have their optimum above the lower bound\n", above_lb);
}

TEST_CASE("exact mode proves an optimum above the lower bound by search", "[exact]") {
  // Found by a random search (random instances this small almost always reach the LB): live
  // bytes peak at 11, yet no placement fits in 11; the brute force agrees that 12 is optimal.
  const std::vector<BufferInterval> buffers = {{7, 0, 0}, {2, 2, 5}, {2, 0, 2}, {2, 4, 5},
                                               {5, 1, 1}, {5, 5, 8}, {5, 3, 3}, {4, 1, 4}};
  REQUIRE(opreg::LowerBoundBytes(buffers, 1) == 11);
  REQUIRE(BruteForceOptimum(buffers) == 12);
  const Placement p = opreg::PlaceBuffers(buffers, {1, 10000});
  CHECK(p.arena_bytes == 12);
  CHECK(p.optimal_by == "search");
  CHECK(p.search == "optimal");
  CHECK(opreg::VerifyPlacement(buffers, p, 1).ok());
  Placement found;
  CHECK(opreg::FindPlacementWithin(buffers, 1, 11, 10000, &found) ==
        ExactSearchOutcome::kInfeasible);
}

TEST_CASE("exact mode respects alignment and reports what it proved", "[exact]") {
  // Three buffers alive together: 100 + 30 + 10 bytes, 64-byte aligned: 128 + 64 + 64.
  const std::vector<BufferInterval> buffers = {{100, 0, 2}, {30, 1, 3}, {10, 2, 2}, {0, 0, 9}};
  const Placement p = opreg::PlaceBuffers(buffers, {64, 1000});
  CHECK(p.arena_bytes == 256);
  CHECK(p.optimal_by == "lower bound");
  for (int64_t o : p.offsets) CHECK(o % 64 == 0);
  Placement found;
  CHECK(opreg::FindPlacementWithin(buffers, 64, 192, 1000, &found) ==
        ExactSearchOutcome::kInfeasible);
  CHECK(opreg::FindPlacementWithin(buffers, 64, 256, 1000, &found) == ExactSearchOutcome::kFound);
  REQUIRE(found.offsets.size() == buffers.size());
  // Without a budget nothing is searched; the lower bound still proves heuristic optima.
  const Placement h = opreg::PlaceBuffers(buffers, {64});
  CHECK(h.search.empty());
  CHECK(h.optimal_by == "lower bound");
  CHECK_THROWS_AS(opreg::FindPlacementWithin(buffers, 0, 256, 1, &found), opreg::Error);
}

}  // namespace
