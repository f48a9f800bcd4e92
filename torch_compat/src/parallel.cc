// at::parallel_for on std::threads: enough for the host loops of CPU kernels, without an
// OpenMP dependency in every library built against torch_compat.
#include "opreg/torch_compat/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "opreg/torch_compat/macros.h"

namespace at {
namespace {

std::atomic<int> g_num_threads{0};  // 0: hardware concurrency
thread_local int t_thread_num = 0;
thread_local bool t_in_parallel = false;

}  // namespace

int get_num_threads() {
  const int n = g_num_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

void set_num_threads(int n) {
  TORCH_CHECK_VALUE(n > 0, "set_num_threads(): expected a positive number of threads, got ", n);
  g_num_threads.store(n, std::memory_order_relaxed);
}

int get_thread_num() { return t_thread_num; }
bool in_parallel_region() { return t_in_parallel; }

void parallel_for(int64_t begin, int64_t end, int64_t grain_size,
                  const std::function<void(int64_t, int64_t)>& f) {
  TORCH_CHECK_VALUE(grain_size >= 0, "parallel_for(): grain_size must be >= 0, got ", grain_size);
  if (begin >= end) return;
  const int64_t n = end - begin;
  const int64_t grain = std::max<int64_t>(grain_size, 1);
  int64_t chunks = std::min<int64_t>(get_num_threads(), (n + grain - 1) / grain);
  // Nested regions run inline, as in ATen.
  if (chunks <= 1 || t_in_parallel) {
    f(begin, end);
    return;
  }
  const int64_t per = (n + chunks - 1) / chunks;
  chunks = (n + per - 1) / per;
  std::exception_ptr error;
  std::mutex error_mu;
  auto run = [&](int64_t c) {
    t_thread_num = static_cast<int>(c);
    t_in_parallel = true;
    try {
      f(begin + c * per, std::min(end, begin + (c + 1) * per));
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
    t_in_parallel = false;
    t_thread_num = 0;
  };
  std::vector<std::thread> workers;
  workers.reserve(chunks - 1);
  for (int64_t c = 1; c < chunks; ++c) workers.emplace_back(run, c);
  run(0);
  for (std::thread& w : workers) w.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace at
