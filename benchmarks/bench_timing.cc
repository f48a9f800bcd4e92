// The benchmarks' host timing (bench_timing.h). Medians, not means: a shared 2-core machine
// has outliers of whole scheduler slices.
#include "bench_timing.h"

#include <algorithm>
#include <chrono>

namespace bench_timing {

double Seconds(const std::function<void()>& fn) {
  const auto a = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

double Median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Median seconds per call of fn; at least 3 calls and min_time_s in total (after one warm-up).
double TimeHost(const std::function<void()>& fn, double min_time_s) {
  fn();
  std::vector<double> t;
  double total = 0;
  while (t.size() < 3 || (total < min_time_s && t.size() < 1000)) {
    t.push_back(Seconds(fn));
    total += t.back();
  }
  return Median(std::move(t));
}

// Median seconds per call of `op` and of `ref`, called alternately (after one warm-up call of
// each) until both have run at least 5 times and min_time_s has passed: on a shared machine the
// memory bandwidth drifts over seconds, and alternating calls lets the op and its reference
// copy see the same drift, so their ratio is stable even when the absolute figures are not.
std::pair<double, double> TimeHostPair(const std::function<void()>& op,
                                       const std::function<void()>& ref, double min_time_s) {
  op();
  ref();
  std::vector<double> t_op, t_ref;
  double total = 0;
  while (t_op.size() < 5 || (total < min_time_s && t_op.size() < 1000)) {
    t_op.push_back(Seconds(op));
    t_ref.push_back(Seconds(ref));
    total += t_op.back() + t_ref.back();
  }
  return {Median(std::move(t_op)), Median(std::move(t_ref))};
}

// Median microseconds per call of fn: batches of calls (about 1 ms each, after a warm-up) until
// min_time_s has passed, so that clock reads do not count at the microsecond scale.
double MicrosPerCall(const std::function<void()>& fn, double min_time_s) {
  for (int i = 0; i < 10; ++i) fn();
  const double one = Seconds(fn);
  const int batch = std::max(1, std::min(100000, static_cast<int>(1e-3 / std::max(one, 1e-8))));
  std::vector<double> per_call;
  double total = 0;
  while (per_call.size() < 5 || (total < min_time_s && per_call.size() < 1000)) {
    const double s = Seconds([&] {
      for (int i = 0; i < batch; ++i) fn();
    });
    per_call.push_back(s / batch * 1e6);
    total += s;
  }
  return Median(std::move(per_call));
}

}  // namespace bench_timing
