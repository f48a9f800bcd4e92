// Placement in one arena (greedy portfolio), the lower bound, the verifier and the allocator
// baselines (memory_placement.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/planner/allocator_baselines.h"

namespace opreg {
namespace {

// Pisarchyk & Lee 2020 ("Efficient Memory Management for Deep Neural Net Inference"), the
// 8-tensor example of their usage-record figure: sizes 32, 28, 36, 16, 8, 64, 10, 40; the widest
// op (step 5) holds t2+t3+t4+t5 = 36+16+8+64 = 124, and greedy by size reaches it.
std::vector<BufferInterval> PisarchykLee() {
  return {{32, 0, 1}, {28, 1, 4}, {36, 2, 5}, {16, 3, 5},
          {8, 4, 5},  {64, 5, 7}, {10, 6, 8}, {40, 7, 8}};
}

// n buffers over `steps` steps, lifetimes and sizes drawn from the given ranges.
std::vector<BufferInterval> RandomTrace(std::mt19937_64& rng, int n, int steps, int max_len,
                                        int64_t max_size) {
  std::uniform_int_distribution<int> first(0, steps - 1), len(0, max_len);
  std::uniform_int_distribution<int64_t> size(0, max_size);
  std::vector<BufferInterval> b;
  for (int i = 0; i < n; ++i) {
    const int f = first(rng);
    b.push_back({size(rng), f, std::min(steps - 1, f + len(rng))});
  }
  return b;
}

TEST_CASE("Pisarchyk & Lee example: arena == LB == 124 at alignment 1", "[placement]") {
  const auto b = PisarchykLee();
  CHECK(LowerBoundBytes(b, 1) == 124);
  const Placement p = PlaceBuffers(b, {1});
  CHECK(p.arena_bytes == 124);
  CHECK(VerifyPlacement(b, p, 1).ok());
  // Greedy by size alone already reaches it (the paper's Alg. 3 result).
  CHECK(p.strategy == "size");
  CHECK(NaivePeakBytes(b) == 124);
  CHECK(NoReusePeakBytes(b) == 234);
}

TEST_CASE("TFLite GPU offset-assignment records", "[placement]") {
  // tensorflow/lite/delegates/gpu/common/memory_management_test.cc (ChainRecords): greedy by
  // size gives 96 at alignment 1. TFLite's alignment variant aligns offsets only (160 at 128);
  // we also round every size up to the alignment, so two live buffers take 2 x 128.
  const std::vector<BufferInterval> chain = {
      {16, 0, 1}, {8, 1, 2}, {64, 2, 3}, {32, 3, 4}, {8, 4, 5}};
  CHECK(PlaceBuffers(chain, {1}).arena_bytes == 96);
  const Placement p128 = PlaceBuffers(chain, {128});
  CHECK(p128.arena_bytes == 256);  // 2 x 128: both live buffers at a step round up to 128
  CHECK(LowerBoundBytes(chain, 128) == 256);
  CHECK(VerifyPlacement(chain, p128, 128).ok());
}

TEST_CASE("Alignment rounds sizes and offsets", "[placement]") {
  const std::vector<BufferInterval> b = {{1, 0, 2}, {65, 1, 3}, {64, 2, 2}, {3, 3, 4}};
  CHECK(LowerBoundBytes(b, 1) == 130);
  CHECK(LowerBoundBytes(b, 64) == 64 + 128 + 64);
  const Placement p = PlaceBuffers(b, {64});
  CHECK(p.arena_bytes == 256);
  for (int64_t off : p.offsets) CHECK(off % 64 == 0);
  CHECK(p.arena_bytes % 64 == 0);
  CHECK(VerifyPlacement(b, p, 64).ok());
  // Alignment 512 (the CUDA caching allocator's rounding) and a non power of two.
  for (int64_t align : {512, 48}) {
    const Placement q = PlaceBuffers(b, {align});
    CHECK(VerifyPlacement(b, q, align).ok());
    CHECK(q.arena_bytes == LowerBoundBytes(b, align));
  }
  // The verifier rejects a misaligned offset.
  Placement bad = p;
  bad.offsets[0] = 32;
  bad.arena_bytes += 64;
  const absl::Status s = VerifyPlacement(b, bad, 64);
  CHECK(!s.ok());
  CHECK_THAT(std::string(s.message()), Catch::Contains("multiple of 64"));
}

TEST_CASE("VerifyPlacement catches a seeded overlap and names both buffers", "[placement]") {
  const auto b = PisarchykLee();
  Placement p = PlaceBuffers(b, {1});
  REQUIRE(VerifyPlacement(b, p, 1).ok());
  // Buffers 2 (steps 2..5) and 5 (steps 5..7) overlap at step 5: put them on top of each other.
  p.offsets[5] = p.offsets[2];
  p.arena_bytes = std::max(p.arena_bytes, p.offsets[5] + 64);
  const absl::Status s = VerifyPlacement(b, p, 1);
  REQUIRE(!s.ok());
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  const std::string msg(s.message());
  CHECK_THAT(msg, Catch::Contains("overlap in time and space"));
  CHECK_THAT(msg, Catch::Contains("buffers 2 (size 36, steps 2..5"));
  CHECK_THAT(msg, Catch::Contains("and 5 (size 64, steps 5..7"));

  // Wrong count, negative offset, buffer past the arena.
  Placement short_p = PlaceBuffers(b, {1});
  short_p.offsets.pop_back();
  CHECK_THAT(std::string(VerifyPlacement(b, short_p, 1).message()),
             Catch::Contains("7 offsets for 8 buffers"));
  Placement small = PlaceBuffers(b, {1});
  small.arena_bytes = 100;
  CHECK_THAT(std::string(VerifyPlacement(b, small, 1).message()), Catch::Contains("past the arena"));
  // Buffers that do not overlap in time may share space.
  const std::vector<BufferInterval> apart = {{64, 0, 1}, {64, 2, 3}};
  CHECK(VerifyPlacement(apart, Placement{{0, 0}, 64, "x"}, 64).ok());
  CHECK(!VerifyPlacement(apart, Placement{{0, 0}, 64, "x"}, 0).ok());  // bad alignment
}

TEST_CASE("Empty and zero-size inputs", "[placement]") {
  const std::vector<BufferInterval> none;
  const Placement p = PlaceBuffers(none);
  CHECK(p.offsets.empty());
  CHECK(p.arena_bytes == 0);
  CHECK(LowerBoundBytes(none, 64) == 0);
  CHECK(VerifyPlacement(none, p, 64).ok());
  CHECK(NaivePeakBytes(none) == 0);
  CHECK(NoReusePeakBytes(none) == 0);
  CHECK(CachingAllocatorPeakBytes(none) == 0);
  CHECK(ExactSizeReusePeakBytes(none) == 0);
  const TraceSummary s = SummarizeTrace(none);
  CHECK(s.arena_bytes == 0);
  CHECK(s.verified);

  const std::vector<BufferInterval> zeros = {{0, 0, 3}, {0, 1, 2}, {8, 1, 1}};
  const Placement z = PlaceBuffers(zeros, {64});
  CHECK(z.arena_bytes == 64);
  CHECK(VerifyPlacement(zeros, z, 64).ok());
  CHECK(CachingAllocatorPeakBytes(zeros) == 2 << 20);
}

TEST_CASE("Invalid buffers throw a value error naming the buffer", "[placement]") {
  const std::vector<BufferInterval> backwards = {{8, 0, 1}, {8, 3, 2}};
  CHECK_THROWS_WITH(PlaceBuffers(backwards),
                    Catch::Contains("buffer 1 (size 8, steps 3..2)"));
  try {
    LowerBoundBytes(backwards, 1);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kValue);
  }
  const std::vector<BufferInterval> negative = {{-1, 0, 1}};
  CHECK(!ValidateBuffers(negative).ok());
  CHECK_THROWS_AS(NaivePeakBytes(negative), Error);
  CHECK_THROWS_AS(SimulateCachingAllocator(negative), Error);
  CHECK_THROWS_AS(SimulateExactSizeReuse(negative), Error);
  CHECK_THROWS_WITH(PlaceBuffers(PisarchykLee(), {0}), Catch::Contains("alignment must be >= 1"));
  CHECK(ValidateBuffers(PisarchykLee(), 64).ok());
}

TEST_CASE("A chain trace packs to the lower bound", "[placement]") {
  // Each op reads the previous output: two buffers live per step, sizes varying.
  std::vector<BufferInterval> b;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> size(1, 1 << 20);
  for (int i = 0; i < 200; ++i) b.push_back({size(rng), i, i + 1});
  for (int64_t align : {1, 64}) {
    const Placement p = PlaceBuffers(b, {align});
    CHECK(VerifyPlacement(b, p, align).ok());
    CHECK(p.arena_bytes == LowerBoundBytes(b, align));
  }
  // A chain with a long-lived buffer under it (three alive per step) is no longer a forest;
  // greedy by size still packs this one (the big buffer first, the chain on top).
  std::vector<BufferInterval> c = {{1 << 22, 0, 199}};
  for (int i = 0; i < 200; ++i) c.push_back({64 * (1 + i % 7), i, i + 1});
  const Placement pc = PlaceBuffers(c, {64});
  CHECK(VerifyPlacement(c, pc, 64).ok());
  CHECK(pc.arena_bytes == LowerBoundBytes(c, 64));
}

TEST_CASE("Random traces always verify, arena >= LB, arena <= sum of aligned sizes",
          "[placement]") {
  std::mt19937_64 rng(12345);
  for (int iter = 0; iter < 300; ++iter) {
    const int n = 1 + static_cast<int>(rng() % 120);
    const int steps = 1 + static_cast<int>(rng() % 60);
    const auto b = RandomTrace(rng, n, steps, static_cast<int>(rng() % 20), 1 + rng() % 5000);
    const int64_t align = iter % 3 == 0 ? 1 : (iter % 3 == 1 ? 64 : 512);
    const Placement p = PlaceBuffers(b, {align});
    INFO("iteration " << iter);
    REQUIRE(VerifyPlacement(b, p, align).ok());
    const int64_t lb = LowerBoundBytes(b, align);
    CHECK(p.arena_bytes >= lb);
    int64_t total = 0;
    for (const auto& x : b) total += AlignUp(x.size, align);
    CHECK(p.arena_bytes <= total);
    CHECK(NaivePeakBytes(b) <= lb);
    CHECK(NaivePeakBytes(b) <= NoReusePeakBytes(b));
  }
}

TEST_CASE("Dense traces take the no-conflict-graph path and still verify", "[placement]") {
  // 4,500 buffers all alive at step 100: ~10M overlapping pairs, past the conflict-graph cap.
  std::mt19937_64 rng(3);
  std::vector<BufferInterval> b;
  for (int i = 0; i < 4500; ++i) {
    b.push_back({static_cast<int64_t>(1 + rng() % 4096), static_cast<int32_t>(rng() % 100),
                 static_cast<int32_t>(100 + rng() % 100)});
  }
  const Placement p = PlaceBuffers(b, {64});
  REQUIRE(VerifyPlacement(b, p, 64).ok());
  CHECK(p.arena_bytes >= LowerBoundBytes(b, 64));
}

// The online rule written the slow, obvious way: at each buffer's first step (in first-step
// order), drop the dead, then scan the alive buffers by offset for the smallest gap that fits.
std::vector<int64_t> OnlineByScan(const std::vector<BufferInterval>& b, int64_t alignment) {
  std::vector<int32_t> order;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i].size > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t x, int32_t y) { return b[x].first < b[y].first; });
  std::vector<int64_t> off(b.size(), 0);
  std::vector<int32_t> alive;
  for (int32_t i : order) {
    alive.erase(std::remove_if(alive.begin(), alive.end(),
                               [&](int32_t j) { return b[j].last < b[i].first; }),
                alive.end());
    std::sort(alive.begin(), alive.end(), [&](int32_t x, int32_t y) { return off[x] < off[y]; });
    const int64_t size = AlignUp(b[i].size, alignment);
    int64_t prev = 0, best = -1, best_gap = INT64_MAX;
    for (int32_t j : alive) {
      const int64_t gap = off[j] - prev;
      if (gap >= size && gap < best_gap) {
        best = prev;
        best_gap = gap;
      }
      prev = off[j] + AlignUp(b[j].size, alignment);
    }
    off[i] = best >= 0 ? best : prev;
    alive.push_back(i);
  }
  return off;
}

TEST_CASE("The online member is the best-fit rule, at any density", "[placement]") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 40; ++round) {
    const int n = 50 + round * 20;
    const auto b = RandomTrace(rng, n, 30 + round * 5, round % 2 ? 8 : 200, 1 << 16);
    PlacementOptions online_only;
    online_only.alignment = 64;
    online_only.heuristic_ms = 0;
    const Placement p = PlaceBuffers(b, online_only);
    INFO("round " << round);
    CHECK(p.strategy == "online");
    CHECK(p.members_stopped == 3);
    CHECK(p.offsets == OnlineByScan(b, 64));
    CHECK(VerifyPlacement(b, p, 64).ok());
  }
}

TEST_CASE("A trace too dense for the greedy members still gets a verified arena", "[placement]") {
  // 20,000 buffers alive together: 2e8 overlapping pairs, no conflict graph, minutes for the
  // three greedy orders; with no time for them the online member alone answers.
  std::vector<BufferInterval> b;
  for (int i = 0; i < 20000; ++i) b.push_back({1000 + (i * 7919) % 5000, i, 20000 + i});
  PlacementOptions options;
  options.heuristic_ms = 0;
  const Placement p = PlaceBuffers(b, options);
  CHECK(p.strategy == "online");
  CHECK(p.members_stopped == 3);
  CHECK(VerifyPlacement(b, p, 64).ok());
  CHECK(p.arena_bytes == LowerBoundBytes(b, 64));  // all alive at step 19999: stacked exactly
}

TEST_CASE("The winning strategy is one of the portfolio's members", "[placement]") {
  std::mt19937_64 rng(99);
  for (int iter = 0; iter < 50; ++iter) {
    const auto b = RandomTrace(rng, 60, 30, 8, 1000);
    const Placement p = PlaceBuffers(b, {1});
    CHECK((p.strategy == "size" || p.strategy == "lifetime" || p.strategy == "area" ||
           p.strategy == "online" || p.strategy == "two-level"));
  }
}

TEST_CASE("Caching allocator model", "[baselines]") {
  SECTION("rounding, pools and segment sizes") {
    // 100 B -> one 512 B block of a 2 MiB small segment.
    CachingAllocatorStats s = SimulateCachingAllocator(std::vector<BufferInterval>{{100, 0, 0}});
    CHECK(s.reserved_peak == 2 << 20);
    CHECK(s.allocated_peak == 512);
    CHECK(s.segments == 1);
    // 3 MiB -> a 20 MiB large segment; 11 MiB alone -> its own segment rounded to 12 MiB.
    s = SimulateCachingAllocator(std::vector<BufferInterval>{{3 << 20, 0, 0}});
    CHECK(s.reserved_peak == 20 << 20);
    s = SimulateCachingAllocator(std::vector<BufferInterval>{{11 << 20 | 1, 0, 0}});
    CHECK(s.reserved_peak == 12 << 20);
    // Both at once: the 11 MiB request fits in the 17 MiB remainder of the 20 MiB segment (best
    // fit over the large pool; no max_split_size by default).
    s = SimulateCachingAllocator(std::vector<BufferInterval>{{3 << 20, 0, 0}, {11 << 20, 0, 0}});
    CHECK(s.reserved_peak == 20 << 20);
    CHECK(s.segments == 1);
    // 3 MiB then 18 MiB: no cached block fits, a second segment of 18 MiB.
    s = SimulateCachingAllocator(std::vector<BufferInterval>{{3 << 20, 0, 0}, {18 << 20, 0, 0}});
    CHECK(s.reserved_peak == 38 << 20);
    CHECK(s.segments == 2);
    // Two 3 MiB buffers share one 20 MiB segment (split: remainder 17 MiB > 1 MiB).
    s = SimulateCachingAllocator(std::vector<BufferInterval>{{3 << 20, 0, 1}, {3 << 20, 1, 1}});
    CHECK(s.reserved_peak == 20 << 20);
    CHECK(s.allocated_peak == 6 << 20);
  }
  SECTION("freed blocks are reused best fit; segments are never released") {
    const std::vector<BufferInterval> b = {{12 << 20, 0, 0}, {12 << 20, 1, 1}, {12 << 20, 2, 2}};
    const CachingAllocatorStats s = SimulateCachingAllocator(b);
    CHECK(s.reserved_peak == 12 << 20);
    CHECK(s.segments == 1);
  }
  SECTION("a fragmenting trace: the caching model holds more than the eager peak") {
    // Growing large buffers: each new one is bigger than any cached block, so every step opens a
    // new segment while the old ones sit cached.
    std::vector<BufferInterval> b;
    for (int i = 0; i < 10; ++i) b.push_back({(12 + 2 * i) << 20, i, i});
    const int64_t caching = CachingAllocatorPeakBytes(b);
    CHECK(caching >= NaivePeakBytes(b));
    CHECK(caching > 3 * NaivePeakBytes(b));
  }
  SECTION("the model never holds less than the eager peak") {
    std::mt19937_64 rng(5);
    for (int iter = 0; iter < 100; ++iter) {
      const auto b = RandomTrace(rng, 80, 40, 10, 8 << 20);
      const CachingAllocatorStats s = SimulateCachingAllocator(b);
      CHECK(s.reserved_peak >= s.allocated_peak);
      CHECK(s.allocated_peak >= NaivePeakBytes(b));
    }
  }
}

TEST_CASE("Exact-size reuse with the #159530 rule never raises the peak", "[baselines]") {
  SECTION("hand example: reuse across a peak is refused, adjacent reuse accepted") {
    // A (100, steps 0..0) dies before the peak at step 1 (B: 150); C (100) starts at step 2.
    // Reusing A's storage for C holds it through step 1: 250 > 150, refused with the rule.
    const std::vector<BufferInterval> b = {{100, 0, 0}, {150, 1, 1}, {100, 2, 2}};
    const ExactSizeReuseStats with = SimulateExactSizeReuse(b, true);
    CHECK(with.baseline_peak == 150);
    CHECK(with.peak_bytes == 150);
    CHECK(with.reused == 0);
    const ExactSizeReuseStats without = SimulateExactSizeReuse(b, false);
    CHECK(without.peak_bytes == 250);
    CHECK(without.reused == 1);
    // Adjacent (free step + 1 == alloc step): always reused.
    const std::vector<BufferInterval> adj = {{100, 0, 0}, {100, 1, 1}, {100, 2, 2}};
    CHECK(SimulateExactSizeReuse(adj, true).reused == 2);
  }
  SECTION("random traces: peak == naive peak with the rule, >= without") {
    std::mt19937_64 rng(2024);
    int64_t reused = 0;
    for (int iter = 0; iter < 300; ++iter) {
      // Few distinct sizes so that exact-size keys match often.
      std::vector<BufferInterval> b = RandomTrace(rng, 1 + rng() % 150, 1 + rng() % 50,
                                                  static_cast<int>(rng() % 10), 4);
      for (auto& x : b) x.size *= 256;
      const ExactSizeReuseStats s = SimulateExactSizeReuse(b, true);
      INFO("iteration " << iter);
      CHECK(s.peak_bytes == NaivePeakBytes(b));
      CHECK(s.baseline_peak == NaivePeakBytes(b));
      CHECK(ExactSizeReusePeakBytes(b) == NaivePeakBytes(b));
      CHECK(SimulateExactSizeReuse(b, false).peak_bytes >= NaivePeakBytes(b));
      reused += s.reused;
    }
    CHECK(reused > 0);  // the rule still lets most reuse through
  }
}

TEST_CASE("SummarizeTrace fills every figure", "[placement]") {
  const TraceSummary s = SummarizeTrace(PisarchykLee(), 1, 3);
  CHECK(s.buffers == 8);
  CHECK(s.steps == 9);
  CHECK(s.no_reuse_bytes == 234);
  CHECK(s.eager_bytes == 124);
  CHECK(s.lb_bytes == 124);
  CHECK(s.arena_bytes == 124);
  CHECK(s.reuse.peak_bytes == 124);
  CHECK(s.caching.reserved_peak == 2 << 20);
  CHECK(s.verified);
  CHECK(s.plan_ms >= 0);
  CHECK(s.strategy == "size");
}

}  // namespace
}  // namespace opreg
