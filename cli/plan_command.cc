#include "plan_command.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>

#include "nlohmann/json.hpp"

namespace opreg::cli {
namespace {

constexpr char kUsage[] =
    "usage: opreg plan [--alignment N] [--json] [--offsets] TRACE.json\n"
    "Places the trace's buffers in one arena (greedy by size / lifetime / area + online best\n"
    "fit, best kept) and prints: no-reuse total (naive), the CUDA caching-allocator model's\n"
    "reserved peak, exact-size reuse with the no-peak-increase rule, the arena, the lower bound\n"
    "(max live bytes), arena/LB, plan time and the winning strategy.\n"
    "  --alignment N  offset alignment in bytes (default: the file's, else 64)\n"
    "  --json         print one JSON object instead of the table row\n"
    "  --offsets      also print each buffer's offset\n"
    "Trace format: {\"alignment\": 64, \"buffers\": [{\"size\": 1024, \"first\": 0, \"last\": 3}, "
    "...]}"
    " (docs/trace_format.md)\n";

}  // namespace

int RunPlanCommand(const std::vector<std::string>& args) {
  std::string path;
  bool json = false, offsets = false;
  int64_t alignment = 0;  // 0: the file's
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
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "opreg plan: cannot read " << path << "\n";
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
                                  {"verified", s.verified}};
    if (offsets) out["offsets"] = s.placement.offsets;
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
    std::cout << line << s.strategy << "\n";
    if (offsets) {
      for (size_t i = 0; i < s.placement.offsets.size(); ++i) {
        std::cout << "buffer " << i << ": offset " << s.placement.offsets[i] << "\n";
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
