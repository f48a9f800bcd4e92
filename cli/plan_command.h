// `opreg plan TRACE.json`: places a buffer trace in one arena and prints the same figures as
// bench_planner (no-reuse total, caching-allocator model, exact-size reuse, arena, LB, arena/LB,
// plan time, winning strategy).
//
// Trace format (docs/trace_format.md):
//   {"name": "optional label", "alignment": 64,
//    "buffers": [{"size": 1024, "first": 0, "last": 3}, [512, 1, 2], ...]}
// `buffers` is required; each entry is an object with integer `size` (bytes, >= 0), `first` and
// `last` (steps, 0 <= first <= last, both inclusive), or the array [size, first, last]. Other
// keys are ignored. `alignment` (>= 1) defaults to 64; --alignment overrides it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "opreg/planner/allocator_baselines.h"

namespace opreg::cli {

struct PlanTrace {
  std::string name;
  int64_t alignment = 64;
  std::vector<BufferInterval> buffers;
};

// Parses a trace file's text (nlohmann/json, plan_trace_reader.cc). Errors (InvalidArgument)
// give the line and column of the problem: where a syntax error stopped the parser, or where the
// offending value ends, e.g. "line 3, column 14: expected an integer for \"size\"".
absl::StatusOr<PlanTrace> ParsePlanTrace(std::string_view text);

// Entry point for `opreg plan [--alignment N] [--json] [--offsets] TRACE.json`. Returns 0, 1 when
// the placement does not verify (a bug), 2 on a usage, read or parse error.
int RunPlanCommand(const std::vector<std::string>& args);

}  // namespace opreg::cli
