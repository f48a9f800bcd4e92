// Internal helpers of the CPU kernels: dtype dispatch, element conversion, the parallel grain.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "opreg/core/dtype.h"
#include "opreg/core/dtype_traits.h"
#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/core/tensor.h"

namespace opreg::kernels::cpu::detail {

// Below this many elements a kernel runs on the calling thread (an OpenMP fork costs a few
// microseconds, more than the work of a small tensor).
inline constexpr int64_t kParallelGrain = 1 << 15;

// Elements per task of the flat elementwise loops: large enough that the (indirect) call into a
// multiversioned loop per chunk costs nothing, and a multiple of 64 bytes for every dtype so
// threads never write the same cache line.
inline constexpr int64_t kChunk = 1 << 14;

// Calls fn(begin, end) over [0, n) in chunks of kChunk, in parallel above kParallelGrain; static
// schedule, so each thread gets one contiguous range.
template <class Fn>
void ParallelChunks(int64_t n, Fn&& fn) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for if (n > kParallelGrain) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunk;
    fn(begin, std::min(n, begin + kChunk));
  }
}

// Calls fn(T{}) with T float, Half or BFloat16 for dtype f32, f16, bf16; kType error otherwise.
template <class Fn>
void DispatchFloating(DType dtype, const char* kernel, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
      fn(float{});
      return;
    case DType::kFloat16:
      fn(Half{});
      return;
    case DType::kBFloat16:
      fn(BFloat16{});
      return;
    default:
      OPREG_THROW(kType, kernel, ": unsupported dtype ", DTypeName(dtype),
                  " (expected f32, f16 or bf16)");
  }
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

// rows x cols view of a contiguous tensor over its last dim (rows = 0 when cols = 0).
inline int64_t Rows(const Tensor& t) {
  const int64_t cols = t.dim() == 0 ? 1 : t.size(-1);
  return cols == 0 ? 0 : t.numel() / cols;
}

}  // namespace opreg::kernels::cpu::detail
