// at::parallel_for, at::parallel_reduce and the thread-count queries of ATen/Parallel.h.
//
// parallel_for splits [begin, end) into chunks of at least `grain_size` and runs them on
// up to get_num_threads() threads (std::thread; the calling thread takes the first chunk).
// An exception from any chunk is rethrown on the calling thread after all chunks finished.
//
// Thread safety: set_num_threads is process-wide; the others may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>

namespace at {

int get_num_threads();
// Process-wide; n >= 1 (n < 1 is a kValue error).
void set_num_threads(int n);
// The index of the calling chunk's thread inside parallel_for, else 0.
int get_thread_num();
bool in_parallel_region();

void parallel_for(int64_t begin, int64_t end, int64_t grain_size,
                  const std::function<void(int64_t, int64_t)>& f);

// Reduces [begin, end) in chunks with f(chunk_begin, chunk_end, ident) and combines the chunk
// results with sf, in chunk order, on the calling thread (deterministic results).
template <class T, class F, class SF>
T parallel_reduce(int64_t begin, int64_t end, int64_t grain_size, const T& ident, const F& f,
                  const SF& sf) {
  if (begin >= end) return ident;
  const int64_t chunk = grain_size > 0 ? grain_size : 1;
  T result = ident;
  for (int64_t b = begin; b < end; b += chunk) {
    result = sf(result, f(b, b + chunk < end ? b + chunk : end, ident));
  }
  return result;
}

}  // namespace at
