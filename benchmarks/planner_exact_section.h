// The exact-mode section of bench_planner: per trace, the heuristic portfolio and the exact search
// side by side (arena / LB, proof, time) and, for traces with a stated capacity (MiniMalloc's
// benchmark), whether each fits and how long the decision search takes to fit it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "planner_traces.h"

namespace opreg::bench {

struct ExactCase {
  Trace trace;
  int64_t alignment = 64;
  int64_t capacity = 0;    // bytes; 0: none stated
  std::string source_csv;  // MiniMalloc's CSV the trace was read from ("" for others)
};

// Prints the table (and the targets) on stdout; writes a JSON list to `json` when given. With
// `minimalloc_bin` (a MiniMalloc solver binary), cases read from a MiniMalloc CSV are also solved
// by it at their capacity, timed in the same run (its exit status says whether it found one).
// Returns false when a placement fails to verify.
bool RunExactSection(const std::vector<ExactCase>& cases, double budget_ms, std::ostream* json,
                     const std::string& minimalloc_bin = "");

}  // namespace opreg::bench
