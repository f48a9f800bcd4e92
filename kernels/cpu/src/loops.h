// Internal helpers of the CPU kernels: dtype dispatch, element conversion, the parallel grain.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "half_convert.h"
#include "multiversion.h"
#include "opreg/core/dtype.h"
#include "opreg/core/dtype_traits.h"
#include "opreg/core/dtype_visit.h"
#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu::detail {

// Below this many elements a kernel runs on the calling thread (an OpenMP fork costs a few
// microseconds, more than the work of a small tensor). The default; the row kernels pass their
// own grains, measured (kRowGrain and the per-op constants next to each kernel).
inline constexpr int64_t kParallelGrain = 1 << 15;

// The grain of the row-wise ops (rms_norm, fused_add_rms_norm_, per_token_quant, softmax), in
// elements: bench_kernels' decode table with OPREG_CPU_GRAIN=0 (team always) against a grain
// too large to reach, 2-core AVX-512 VM, rows of 4096: the team is slower at 1 row, level at
// 2 (f32 rms_norm 1.5 vs 1.4 us; softmax 3.0 vs 2.9), and ahead from 4 rows on (rms_norm 2.2 vs
// 2.9 us, softmax 3.6 vs 6.4, per_token_quant bf16 2.2 vs 2.6, fused_add_rms_norm_ bf16 3.7 vs
// 4.5; f32 4.4 vs 4.4).
inline constexpr int64_t kRowGrain = 1 << 13;
// silu_and_mul (work = output elements, each reading two inputs and computing an exp): the team
// is ahead from 2 rows of 4096 (f32 2.3 vs 3.1 us, bf16 2.0 vs 2.6), behind at 1.
inline constexpr int64_t kActivationGrain = 1 << 12;
// The flat elementwise ops (add, mul, split_add), whose tasks are kChunk elements: the team is
// behind at 4 rows of 4096 (add f32 2.6 vs 2.0 us, split_add 3.4 vs 2.8) and ahead at 8 (add
// 2.7 vs 3.8, split_add 3.4 vs 5.1): from two chunks on.
inline constexpr int64_t kElementwiseGrain = 1 << 14;

// Whether a loop of `work` elements runs on the OpenMP team. Below the grain the kernels run
// the loop on the calling thread without entering a parallel region at all: libgomp's
// `#pragma omp parallel if (false)` still costs about 330 ns and a futex syscall per region
// (measured on the CI VM), a fixed floor under every decode-size call.
inline bool UseTeam(int64_t work, int64_t grain = kParallelGrain) {
  // OPREG_CPU_GRAIN=N replaces every grain (how bench_kernels' decode table measures where the
  // team starts to pay off); read once.
  static const int64_t kOverride = [] {
    const char* v = std::getenv("OPREG_CPU_GRAIN");
    return v != nullptr && *v != '\0' ? std::atoll(v) : int64_t{-1};
  }();
  return work > (kOverride >= 0 ? kOverride : grain) && omp_get_max_threads() > 1;
}

// fn(i) for i in [0, n): on the calling thread when UseTeam(work) is false, else split
// statically over the OpenMP team.
template <class Fn>
void ParallelFor(int64_t n, int64_t work, Fn&& fn, int64_t grain = kParallelGrain) {
  if (!UseTeam(work, grain)) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

// Elements per task of the flat elementwise loops: large enough that the (indirect) call into a
// multiversioned loop per chunk costs nothing, and a multiple of 64 bytes for every dtype so
// threads never write the same cache line.
inline constexpr int64_t kChunk = 1 << 14;

// Calls fn(T{}) with T float, Half or BFloat16 for dtype f32, f16, bf16; kType error otherwise.
template <class Fn>
void DispatchFloating(DType dtype, const char* kernel, Fn&& fn) {
  VisitFloatingDType(dtype, fn, [kernel](DType unsupported) {
    OPREG_THROW(kType, kernel, ": unsupported dtype ", DTypeName(unsupported),
                " (expected f32, f16 or bf16)");
  });
}

// Precondition checks the registrations normally guarantee; cheap, so kernels called directly
// fail loudly instead of reading out of bounds.
inline void RequireCpuContiguous(const char* kernel, const Tensor& t, const char* what) {
  OPREG_CHECK_VALUE(t.defined() && t.is_cpu() && t.is_contiguous(), kernel, ": ", what,
                    " must be a contiguous CPU tensor");
}

// Stores `v` rounded to T. Writing the bits directly, rather than assigning a T temporary,
// keeps loops over f16/bf16 vectorizable (GCC does not vectorize the struct copy).
template <class T>
inline void Store(T* p, float v) {
  if constexpr (std::is_same_v<T, float>) {
    *p = v;
  } else {
    p->x = T::FromFloat(v);
  }
}

// Stores `v` rounded to T and returns the value stored (as a later read of *p would see it),
// converting once.
template <class T>
inline float StoreRounded(T* p, float v) {
  if constexpr (std::is_same_v<T, float>) {
    *p = v;
    return v;
  } else {
    const uint16_t bits = T::FromFloat(v);
    p->x = bits;
    return static_cast<float>(T(bits, kFromBits));
  }
}

// Outputs of at least this many bytes are written with non-temporal (streaming) stores: an
// ordinary store first reads the line it writes (read for ownership), so a kernel writing a
// large output moves 1.5x its bytes and cannot get near copy bandwidth (memcpy streams too).
// Smaller outputs stay in cache for the next op.
inline constexpr int64_t kStreamBytes = int64_t{8} << 20;

// Elements per block of a streamed output: computed into an L1 stack buffer, then StreamCopy.
inline constexpr int64_t kStreamBlock = 512;

// Copies `bytes` from an L1 buffer to dst with non-temporal stores (SSE2, so every clone can
// inline it); unaligned head and tail bytes use ordinary stores. Call StreamFence() before the
// data is read by another thread (ParallelChunks and ParallelRows do, once per thread).
OPREG_CPU_ALWAYS_INLINE void StreamCopy(void* __restrict dst, const void* __restrict src,
                                        int64_t bytes) {
#if defined(__SSE2__)
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const int64_t head = std::min<int64_t>(
      bytes, static_cast<int64_t>((16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15));
  std::memcpy(d, s, static_cast<size_t>(head));
  d += head;
  s += head;
  bytes -= head;
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64) {
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), v0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), v1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), v2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), v3);
  }
  for (; bytes >= 16; bytes -= 16, d += 16, s += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  }
  std::memcpy(d, s, static_cast<size_t>(bytes));
#else
  std::memcpy(dst, src, static_cast<size_t>(bytes));
#endif
}

// Orders the non-temporal stores before later stores (and the OpenMP barrier after them).
OPREG_CPU_ALWAYS_INLINE void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// An uninitialized, 64-byte aligned stack buffer of n T: Half and BFloat16 zero-initialize
// their bits, so a plain T array would be cleared on every call.
template <class T, int64_t N>
struct Buffer {
  alignas(64) unsigned char raw[N * sizeof(T)];
  T* get() { return reinterpret_cast<T*>(raw); }
};

// Calls fill(o, j0, m) over [0, n) in blocks for a loop writing one output: o is out + j0 (one
// block of n, in place), or, when `stream`, an L1 buffer of kStreamBlock elements that is then
// copied to out + j0 with StreamCopy (the caller fences). Inlined with fill, so fill's loops are
// compiled for the caller's ISA clone.
template <class T, class Fill>
OPREG_CPU_ALWAYS_INLINE void FillBlocks(T* out, int64_t n, bool stream, Fill&& fill) {
  Buffer<T, kStreamBlock> buf_storage;
  T* buf = buf_storage.get();
  const int64_t step = stream ? kStreamBlock : n;
  for (int64_t j0 = 0; j0 < n; j0 += step) {
    const int64_t m = std::min(step, n - j0);
    fill(stream ? buf : out + j0, j0, m);
    if (stream) StreamCopy(out + j0, buf, m * static_cast<int64_t>(sizeof(T)));
  }
}

// Writes f[0, n) rounded to f16 at out (FloatToHalf); when `stream`, through an L1 buffer and
// StreamCopy (the caller fences).
inline void StoreHalf(const float* f, Half* out, int64_t n, bool stream) {
  if (!stream) {
    FloatToHalf(f, out, n);
    return;
  }
  Buffer<Half, kHalfBlock> buf_storage;
  Half* buf = buf_storage.get();
  for (int64_t j0 = 0; j0 < n; j0 += kHalfBlock) {
    const int64_t m = std::min(kHalfBlock, n - j0);
    FloatToHalf(f + j0, buf, m);
    StreamCopy(out + j0, buf, m * static_cast<int64_t>(sizeof(Half)));
  }
}

// How far ahead of their reads the single-pass row kernels prefetch: about a microsecond of
// their work, more than the memory latency.
inline constexpr int64_t kPrefetchBytes = 2048;

// Prefetches [p, p + bytes) into the caches: row kernels prefetch their next row before
// their last pass over the current one, so memory reads go on while they compute and write.
OPREG_CPU_ALWAYS_INLINE void Prefetch(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, 0, 3);
}

// Whether an output of n elements of T is large enough to stream (see kStreamBytes).
template <class T>
inline bool ShouldStream(int64_t n) {
  return n * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
}

// Calls fn(begin, end) over [0, n) in chunks of kChunk, in parallel above kParallelGrain; static
// schedule, so each thread gets one contiguous range. `stream`: fn writes with non-temporal
// stores, and each thread fences them once when its range is done.
template <class Fn>
void ParallelChunks(int64_t n, Fn&& fn, bool stream = false, int64_t grain = kParallelGrain) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  if (!UseTeam(n, grain)) {
    for (int64_t c = 0; c < chunks; ++c) fn(c * kChunk, std::min(n, (c + 1) * kChunk));
    if (stream) StreamFence();
    return;
  }
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t begin = c * kChunk;
      fn(begin, std::min(n, begin + kChunk));
    }
    if (stream) StreamFence();
  }
}

// Calls fn(r) for r in [0, rows), in parallel when `work` (elements) exceeds kParallelGrain;
// static schedule. `stream`: as for ParallelChunks.
template <class Fn>
void ParallelRows(int64_t rows, int64_t work, bool stream, Fn&& fn, int64_t grain = kRowGrain) {
  if (!UseTeam(work, grain)) {
    for (int64_t r = 0; r < rows; ++r) fn(r);
    if (stream) StreamFence();
    return;
  }
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (int64_t r = 0; r < rows; ++r) fn(r);
    if (stream) StreamFence();
  }
}

// rows x cols view of a contiguous tensor over its last dim (rows = 0 when cols = 0).
inline int64_t Rows(const Tensor& t) {
  const int64_t cols = t.dim() == 0 ? 1 : t.size(-1);
  return cols == 0 ? 0 : t.numel() / cols;
}

}  // namespace opreg::kernels::cpu::detail
