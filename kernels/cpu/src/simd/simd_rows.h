// Internal: the vector row kernels of the built-in ops, written once (simd_rows.inc) on the
// shared API of avx512.h and avx2.h and compiled for each (simd_avx512.cc, simd_avx2.cc). A
// kernel's .cc picks one with RunSimd and keeps its portable loop for every other CPU and
// compiler. Each function takes contiguous f32, f16 or bf16 data (the f32 values of T computed
// and rounded as the portable loops do; exp and 1 / x differ in the last bits, see avx512.h),
// runs on the calling thread, and allocates nothing.
#pragma once

#include <cstdint>

#include "simd/avx2.h"
#include "simd/avx512.h"

// Whether the entry points below exist (GCC on x86-64); kernels guard their RunSimd calls with it.
#define OPREG_CPU_HAVE_SIMD_ROWS (OPREG_CPU_HAVE_AVX512 && OPREG_CPU_HAVE_AVX2)

namespace opreg::kernels::cpu {
namespace detail {
struct BinaryKind;  // binary.h
}  // namespace detail

#if OPREG_CPU_HAVE_SIMD_ROWS

// The entry points, declared alike in namespaces avx512 and avx2. `stream`: outputs are written
// with non-temporal stores (the caller fences, see StreamFence in loops.h).
//   BinaryChunk: o[j] = kind(a[j], b[j]) over [0, n).
//   SplitAddChunk: s = x + y, d = x - y over [0, n).
//   RmsNormRow: y = x / sqrt(mean(x^2) + eps) * w over one row of h.
//   FusedAddRmsNormRow: z += x (rounded to T), then x = rms_norm(z) * w over one row of h.
//   SiluAndMulRow: y = silu(a) * b over d elements.
//   QuantizeRowInt8: q = round(x / scale) with scale = absmax / 127, returned.
//   SoftmaxRow: y = softmax(x) over one row of n.
#define OPREG_CPU_DECLARE_SIMD_ROWS(ns)                                                            \
  namespace ns {                                                                                   \
  template <class T>                                                                               \
  void BinaryChunk(const T* a, const T* b, T* o, int64_t n, detail::BinaryKind kind, bool stream); \
  template <class T>                                                                               \
  void SplitAddChunk(const T* x, const T* y, T* s, T* d, int64_t n, bool stream);                  \
  template <class T>                                                                               \
  void RmsNormRow(const T* x, const T* w, T* y, int64_t h, float eps, bool stream);                \
  template <class T>                                                                               \
  void FusedAddRmsNormRow(T* x, T* z, const T* w, int64_t h, float eps);                           \
  template <class T>                                                                               \
  void SiluAndMulRow(const T* a, const T* b, T* y, int64_t d, bool stream);                        \
  template <class T>                                                                               \
  float QuantizeRowInt8(const T* x, int8_t* q, int64_t h, bool stream);                            \
  template <class T>                                                                               \
  void SoftmaxRow(const T* x, T* y, int64_t n, bool stream);                                       \
  }  // namespace ns
OPREG_CPU_DECLARE_SIMD_ROWS(avx512)
OPREG_CPU_DECLARE_SIMD_ROWS(avx2)
#undef OPREG_CPU_DECLARE_SIMD_ROWS

namespace detail {

// Calls run(f512) where avx512::Supported(), else run(f2) where avx2::Supported(), and says
// whether it called; f512 and f2 are the two builds of one entry point above.
template <class Run, class F>
bool RunSimd(Run&& run, F* f512, F* f2) {
  if (avx512::Supported()) {
    run(f512);
    return true;
  }
  if (avx2::Supported()) {
    run(f2);
    return true;
  }
  return false;
}

}  // namespace detail

#endif  // OPREG_CPU_HAVE_SIMD_ROWS

}  // namespace opreg::kernels::cpu
