// Host-side timing for the benchmarks: medians of repeated calls on the steady clock.
// Not thread-safe (each call times one closure on the calling thread).
#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace bench_timing {

// Seconds one call of fn takes on the host clock.
double Seconds(const std::function<void()>& fn);
// The median of `t` (not empty).
double Median(std::vector<double> t);
// Median seconds per call of fn; at least 3 calls and min_time_s in total (after one warm-up).
double TimeHost(const std::function<void()>& fn, double min_time_s);
// Median seconds per call of `op` and of `ref`, called alternately until both ran at least 5
// times and min_time_s has passed (so that both see the same drift of a shared machine).
std::pair<double, double> TimeHostPair(const std::function<void()>& op,
                                       const std::function<void()>& ref, double min_time_s);
// Median microseconds per call of fn, timed in batches of about 1 ms each.
double MicrosPerCall(const std::function<void()>& fn, double min_time_s);

}  // namespace bench_timing
