#include "plan_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "input_file.h"
#include "nlohmann/json.hpp"
#include "opreg/core/string_util.h"
#include "opreg/planner/exact_placement.h"

namespace opreg::cli {
namespace {

constexpr char kUsage[] =
    "usage: opreg plan [--alignment N] [--budget-ms N [--capacity BYTES]] [--json] [--offsets]\n"
    "                  TRACE.json\n"
    "Places the trace's buffers in one arena (greedy by size / lifetime / area + online best\n"
    "fit, best kept; a greedy member still running after 1 s is dropped) and prints: no-reuse\n"
    "total (naive), the CUDA caching-allocator model's reserved peak, exact-size reuse with the\n"
    "no-peak-increase rule, the arena, the lower bound (max live bytes), arena/LB, plan time\n"
    "and the winning strategy.\n"
    "  --alignment N  offset alignment in bytes (default: the file's, else 64)\n"
    "  --budget-ms N  then place again with the exact search, all of it within N ms (the\n"
    "                 greedy members at most N/2); prints the exact arena, whether it is\n"
    "                 proven optimal, and the search time\n"
    "  --capacity B   with --budget-ms: instead, search for a placement within B bytes and\n"
    "                 say whether one was found, shown impossible, or not found in time\n"
    "  --json         print one JSON object instead of the table row\n"
    "  --offsets      also print each buffer's offset\n"
    "Trace format: {\"alignment\": 64, \"buffers\": [{\"size\": 1024, \"first\": 0, \"last\": 3}, "
    "...]}"
    " (docs/trace_format.md)\n";

// What the exact mode showed, for the table.
std::string ExactVerdict(const Placement& p) {
  if (!p.optimal_by.empty()) return "proven optimal by " + p.optimal_by;
  if (p.search == "too large") {
    return StrCat("not searched (over ", kExactSearchMaxBuffers,
                  " buffers or too many time overlaps), not proven optimal");
  }
  return "not proven optimal (stopped at the budget)";
}

// `--capacity`: the decision search alone. Exit 0 when a placement was found, 3 when none fits
// (proven) or none was found in time.
int RunCapacitySearch(const PlanTrace& trace, int64_t capacity, double budget_ms, bool json) {
  Placement found;
  int64_t nodes = 0;
  const auto start = std::chrono::steady_clock::now();
  ExactSearchOutcome outcome;
  try {
    outcome =
        FindPlacementWithin(trace.buffers, trace.alignment, capacity, budget_ms, &found, &nodes);
  } catch (const std::exception& e) {  // the placement found did not verify: a bug
    std::cerr << "opreg plan: " << e.what() << "\n";
    return 1;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const char* what = ExactSearchOutcomeName(outcome);
  const int64_t arena = outcome == ExactSearchOutcome::kFound ? found.arena_bytes : 0;
  if (json) {
    nlohmann::ordered_json out = {{"trace", trace.name}, {"capacity", capacity},
                                  {"outcome", what},     {"arena_bytes", arena},
                                  {"search_ms", ms},     {"search_nodes", nodes}};
    std::cout << out.dump() << "\n";
  } else {
    std::cout << trace.name << ": capacity " << capacity << ": " << what;
    if (arena > 0) std::cout << " (arena " << arena << ")";
    std::cout << ", " << ms << " ms, " << nodes << " nodes\n";
  }
  return outcome == ExactSearchOutcome::kFound ? 0 : 3;
}

}  // namespace

int RunPlanCommand(const std::vector<std::string>& args) {
  std::string path;
  bool json = false, offsets = false;
  int64_t alignment = 0;  // 0: the file's
  double budget_ms = 0;   // 0: heuristics only
  int64_t capacity = -1;  // -1: minimize the arena
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--offsets") {
      offsets = true;
    } else if (a == "--alignment") {
      char* end = nullptr;
      const long long v = i + 1 < args.size() ? std::strtoll(args[i + 1].c_str(), &end, 10) : 0;
      if (i + 1 >= args.size() || end == args[i + 1].c_str() || *end != '\0' || v < 1 ||
          v > (1LL << 30)) {
        std::cerr << "opreg plan: --alignment needs an integer in [1, 2^30]\n" << kUsage;
        return 2;
      }
      alignment = v;
      ++i;
    } else if (a == "--budget-ms") {
      char* end = nullptr;
      const double v = i + 1 < args.size() ? std::strtod(args[i + 1].c_str(), &end) : 0;
      if (i + 1 >= args.size() || end == args[i + 1].c_str() || *end != '\0' || !(v > 0) ||
          v > 86'400'000) {
        std::cerr << "opreg plan: --budget-ms needs a number of milliseconds in (0, 86400000]\n"
                  << kUsage;
        return 2;
      }
      budget_ms = v;
      ++i;
    } else if (a == "--capacity") {
      char* end = nullptr;
      const long long v = i + 1 < args.size() ? std::strtoll(args[i + 1].c_str(), &end, 10) : -1;
      if (i + 1 >= args.size() || end == args[i + 1].c_str() || *end != '\0' || v < 0) {
        std::cerr << "opreg plan: --capacity needs a number of bytes >= 0\n" << kUsage;
        return 2;
      }
      capacity = v;
      ++i;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::cerr << "opreg plan: unknown option " << a << "\n" << kUsage;
      return 2;
    } else if (path.empty()) {
      path = a;
    } else {
      std::cerr << "opreg plan: give one trace file\n" << kUsage;
      return 2;
    }
  }
  if (path.empty()) {
    std::cerr << "opreg plan: missing TRACE.json\n" << kUsage;
    return 2;
  }
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in;
    std::string why;
    if (!OpenInput(path, &in, &why)) {
      std::cerr << "opreg plan: cannot read " << path << ": " << why << "\n";
      return 2;
    }
    text << in.rdbuf();
  }
  absl::StatusOr<PlanTrace> trace = ParsePlanTrace(text.str());
  if (!trace.ok()) {
    std::cerr << "opreg plan: " << path << ": " << trace.status().message() << "\n";
    return 2;
  }
  if (alignment > 0) trace->alignment = alignment;
  if (trace->name.empty()) trace->name = path;

  TraceSummary s;
  try {
    s = SummarizeTrace(trace->buffers, trace->alignment, 3);
  } catch (const std::exception& e) {
    std::cerr << "opreg plan: " << path << ": " << e.what() << "\n";
    return 2;
  }
  if (capacity >= 0 && budget_ms <= 0) {
    std::cerr << "opreg plan: --capacity needs --budget-ms\n" << kUsage;
    return 2;
  }
  if (capacity >= 0) return RunCapacitySearch(*trace, capacity, budget_ms, json);
  // The exact mode, next to the heuristic figures.
  std::optional<Placement> exact;
  if (budget_ms > 0) {
    exact = PlaceBuffers(trace->buffers, {trace->alignment, budget_ms});
    if (!VerifyPlacement(trace->buffers, *exact, trace->alignment).ok()) s.verified = false;
  }
  const double ratio = s.lb_bytes > 0 ? static_cast<double>(s.arena_bytes) / s.lb_bytes : 1.0;
  if (json) {
    // ordered_json keeps the fields in the order a reader of the table expects.
    nlohmann::ordered_json out = {{"trace", trace->name},
                                  {"buffers", s.buffers},
                                  {"steps", s.steps},
                                  {"alignment", s.alignment},
                                  {"naive_bytes", s.no_reuse_bytes},
                                  {"eager_bytes", s.eager_bytes},
                                  {"caching_bytes", s.caching.reserved_peak},
                                  {"caching_segments", s.caching.segments},
                                  {"reuse_bytes", s.reuse.peak_bytes},
                                  {"reuse_avoided", s.reuse.reused},
                                  {"arena_bytes", s.arena_bytes},
                                  {"lb_bytes", s.lb_bytes},
                                  {"arena_over_lb", ratio},
                                  {"plan_ms", s.plan_ms},
                                  {"strategy", s.strategy},
                                  {"members_stopped", s.placement.members_stopped},
                                  {"verified", s.verified}};
    if (exact) {
      out["exact"] = {{"arena_bytes", exact->arena_bytes},
                      {"arena_over_lb", s.lb_bytes > 0 ? static_cast<double>(exact->arena_bytes) /
                                                             static_cast<double>(s.lb_bytes)
                                                       : 1.0},
                      {"optimal_by", exact->optimal_by},
                      {"search", exact->search},
                      {"search_ms", exact->search_ms},
                      {"search_nodes", exact->search_nodes},
                      {"strategy", exact->strategy},
                      {"budget_ms", budget_ms}};
    }
    if (offsets) out["offsets"] = exact ? exact->offsets : s.placement.offsets;
    std::cout << out.dump() << "\n";
  } else {
    char line[512];
    std::snprintf(line, sizeof line, "%-24s %6s %14s %14s %14s %14s %14s %8s %9s  %s\n", "trace",
                  "#bufs", "naive", "caching", "reuse", "arena", "LB", "arena/LB", "plan ms",
                  "strategy");
    std::cout << line;
    std::snprintf(line, sizeof line, "%-24s %6lld %14lld %14lld %14lld %14lld %14lld %8.3f %9.3f  ",
                  trace->name.c_str(), static_cast<long long>(s.buffers),
                  static_cast<long long>(s.no_reuse_bytes),
                  static_cast<long long>(s.caching.reserved_peak),
                  static_cast<long long>(s.reuse.peak_bytes), static_cast<long long>(s.arena_bytes),
                  static_cast<long long>(s.lb_bytes), ratio, s.plan_ms);
    std::cout << line << s.strategy;
    if (s.placement.members_stopped > 0) {
      std::cout << " (" << s.placement.members_stopped << " greedy member(s) stopped at the 1 s "
                << "limit)";
    }
    std::cout << "\n";
    if (exact) {
      std::snprintf(line, sizeof line,
                    "exact (budget %.0f ms): arena %lld, arena/LB %.3f, %s, search %.1f ms, "
                    "%lld nodes, strategy %s\n",
                    budget_ms, static_cast<long long>(exact->arena_bytes),
                    s.lb_bytes > 0 ? static_cast<double>(exact->arena_bytes) / s.lb_bytes : 1.0,
                    ExactVerdict(*exact).c_str(),
                    exact->search_ms, static_cast<long long>(exact->search_nodes),
                    exact->strategy.c_str());
      std::cout << line;
    }
    if (offsets) {
      const std::vector<int64_t>& o = exact ? exact->offsets : s.placement.offsets;
      for (size_t i = 0; i < o.size(); ++i) {
        std::cout << "buffer " << i << ": offset " << o[i] << "\n";
      }
    }
  }
  std::cout.flush();
  if (!s.verified) {
    std::cerr << "opreg plan: internal error: the placement does not verify\n";
    return 1;
  }
  return 0;
}

}  // namespace opreg::cli
