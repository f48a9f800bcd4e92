// bench_planner's exact-mode section (planner_exact_section.h). Each trace is placed twice: the
// heuristic portfolio alone, then with the exact search (budget_ms); traces with a capacity also
// get the decision search at that capacity, the question MiniMalloc's benchmark asks.
#include "planner_exact_section.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "nlohmann/json.hpp"
#include "opreg/planner/exact_placement.h"
#include "opreg/planner/memory_placement.h"

namespace opreg::bench {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// `s` quoted for /bin/sh.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// Runs MiniMalloc on `csv` at `capacity`; returns its wall time in ms, or -1 when it failed.
double RunMiniMalloc(const std::string& bin, const std::string& csv, int64_t capacity) {
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("opreg_minimalloc_" + std::to_string(getpid()) + ".csv"))
                              .string();
  const std::string cmd = ShellQuote(bin) + " --capacity=" + std::to_string(capacity) +
                          " --input=" + ShellQuote(csv) + " --output=" + ShellQuote(out) +
                          " > /dev/null 2>&1";
  const auto start = Clock::now();
  const int status = std::system(cmd.c_str());
  const double ms = MsSince(start);
  std::filesystem::remove(out);
  return status == 0 ? ms : -1;
}

}  // namespace

bool RunExactSection(const std::vector<ExactCase>& cases, double budget_ms, std::ostream* json,
                     const std::string& minimalloc_bin) {
  std::printf(
      "\nexact mode (budget %.0f ms per trace; heuristic | exact; proof: lb = arena equals "
      "the lower bound, search = no smaller arena fits, - = not proven)\n",
      budget_ms);
  std::printf("%-22s %-10s %5s %9s %8s %8s | %8s %6s %9s | %9s %5s %5s %11s %9s%s\n", "trace",
              "kind", "#bufs", "LB", "arena/LB", "ms", "arena/LB", "proof", "ms", "capacity",
              "fits", "fits", "decision", "ms", minimalloc_bin.empty() ? "" : " | MiniMalloc ms");
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  bool verified = true;
  int with_capacity = 0, heuristic_fit = 0, exact_fit = 0, decision_fit = 0;
  for (const ExactCase& c : cases) {
    const auto& b = c.trace.buffers;
    const int64_t lb = LowerBoundBytes(b, c.alignment);
    auto start = Clock::now();
    const Placement h = PlaceBuffers(b, {c.alignment});
    const double h_ms = MsSince(start);
    const Placement e = PlaceBuffers(b, {c.alignment, budget_ms});
    verified = verified && VerifyPlacement(b, h, c.alignment).ok() &&
               VerifyPlacement(b, e, c.alignment).ok();
    const char* proof = e.optimal_by == "lower bound" ? "lb"
                        : e.optimal_by == "search"    ? "search"
                                                      : "-";
    auto ratio = [&](int64_t arena) { return lb > 0 ? static_cast<double>(arena) / lb : 1.0; };
    nlohmann::ordered_json row = {{"trace", c.trace.name},
                                  {"kind", c.trace.kind},
                                  {"buffers", b.size()},
                                  {"alignment", c.alignment},
                                  {"lb_bytes", lb},
                                  {"heuristic_arena_bytes", h.arena_bytes},
                                  {"heuristic_ms", h_ms},
                                  {"exact_arena_bytes", e.arena_bytes},
                                  {"exact_optimal_by", e.optimal_by},
                                  {"exact_search", e.search},
                                  {"exact_ms", e.search_ms},
                                  {"exact_nodes", e.search_nodes},
                                  {"budget_ms", budget_ms}};
    char capacity[16] = "-", fits_h[8] = "-", fits_e[8] = "-", decision[16] = "-", d_ms[16] = "-";
    if (c.capacity > 0) {
      ++with_capacity;
      heuristic_fit += h.arena_bytes <= c.capacity;
      exact_fit += e.arena_bytes <= c.capacity;
      Placement found;  // verified by FindPlacementWithin
      int64_t nodes = 0;
      start = Clock::now();
      const ExactSearchOutcome o =
          FindPlacementWithin(b, c.alignment, c.capacity, budget_ms, &found, &nodes);
      const double ms = MsSince(start);
      decision_fit += o == ExactSearchOutcome::kFound;
      std::snprintf(capacity, sizeof capacity, "%lld", static_cast<long long>(c.capacity));
      std::snprintf(fits_h, sizeof fits_h, "%s", h.arena_bytes <= c.capacity ? "yes" : "no");
      std::snprintf(fits_e, sizeof fits_e, "%s", e.arena_bytes <= c.capacity ? "yes" : "no");
      std::snprintf(decision, sizeof decision, "%s", ExactSearchOutcomeName(o));
      std::snprintf(d_ms, sizeof d_ms, "%.1f", ms);
      row["capacity"] = c.capacity;
      row["decision"] = ExactSearchOutcomeName(o);
      row["decision_ms"] = ms;
      row["decision_nodes"] = nodes;
    }
    std::string theirs;
    if (!minimalloc_bin.empty() && !c.source_csv.empty() && c.capacity > 0) {
      const double m_ms = RunMiniMalloc(minimalloc_bin, c.source_csv, c.capacity);
      char buf[32];
      std::snprintf(buf, sizeof buf, " | %14s", m_ms < 0 ? "failed" : "");
      if (m_ms >= 0) std::snprintf(buf, sizeof buf, " | %14.1f", m_ms);
      theirs = buf;
      row["minimalloc_ms"] = m_ms;
    }
    std::printf("%-22s %-10s %5zu %9lld %8.3f %8.2f | %8.3f %6s %9.1f | %9s %5s %5s %11s %9s%s\n",
                c.trace.name.c_str(), c.trace.kind.c_str(), b.size(), static_cast<long long>(lb),
                ratio(h.arena_bytes), h_ms, ratio(e.arena_bytes), proof, e.search_ms, capacity,
                fits_h, fits_e, decision, d_ms, theirs.c_str());
    rows.push_back(std::move(row));
  }
  if (with_capacity > 0) {
    std::printf(
        "within capacity: heuristic %d/%d, exact (minimizing) %d/%d, decision search "
        "%d/%d\n",
        heuristic_fit, with_capacity, exact_fit, with_capacity, decision_fit, with_capacity);
  }
  if (json != nullptr) *json << rows.dump(1) << "\n";
  return verified;
}

}  // namespace opreg::bench
