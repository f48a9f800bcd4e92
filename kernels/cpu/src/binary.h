// Internal: the broadcasting binary elementwise loop shared by add and mul.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "loops.h"
#include "half_convert.h"
#include "multiversion.h"
#include "simd/simd_rows.h"

namespace opreg::kernels::cpu::detail {

// o[j] = op(a[j * ia], b[j * ib]) for 0 <= j < n (n >= 1), computed in f32; ia and ib are 1
// (contiguous) or 0 (broadcast) on the vectorized paths, anything else on the scalar fallback.
// `stream`: write orow with non-temporal stores (see kStreamBytes).
template <class T, class Op>
OPREG_CPU_MULTIVERSION void BinaryRow(const T* __restrict ar, const T* __restrict br,
                                      T* __restrict orow, int64_t n, int64_t ia, int64_t ib, Op op,
                                      bool stream) {
  if constexpr (std::is_same_v<T, Half>) {
    // f16: convert blocks with F16C (see half_convert.h) and compute in f32; a broadcast
    // operand is splat into its buffer.
    if ((ia == 0 || ia == 1) && (ib == 0 || ib == 1)) {
      float fa[kHalfBlock], fb[kHalfBlock];
      const float a0 = static_cast<float>(ar[0]), b0 = static_cast<float>(br[0]);
      if (ib == 0) std::fill(fb, fb + std::min(kHalfBlock, n), b0);
      for (int64_t j0 = 0; j0 < n; j0 += kHalfBlock) {
        const int64_t m = std::min(kHalfBlock, n - j0);
        if (ia == 1) {
          HalfToFloat(ar + j0, fa, m);
        } else {
          std::fill(fa, fa + m, a0);  // fa holds the previous block's results
        }
        if (ib == 1) HalfToFloat(br + j0, fb, m);
#pragma omp simd
        for (int64_t j = 0; j < m; ++j) fa[j] = op(fa[j], fb[j]);
        StoreHalf(fa, orow + j0, m, stream);
      }
      return;
    }
  }
  FillBlocks(orow, n, stream, [&](T* __restrict o, int64_t j0, int64_t m) {
    const T* __restrict a = ar + j0 * ia;
    const T* __restrict b = br + j0 * ib;
    if (ia == 1 && ib == 1) {
#pragma omp simd
      for (int64_t j = 0; j < m; ++j) {
        Store(&o[j], op(static_cast<float>(a[j]), static_cast<float>(b[j])));
      }
    } else if (ia == 1 && ib == 0) {
      const float bv = static_cast<float>(b[0]);
#pragma omp simd
      for (int64_t j = 0; j < m; ++j) Store(&o[j], op(static_cast<float>(a[j]), bv));
    } else if (ia == 0 && ib == 1) {
      const float av = static_cast<float>(a[0]);
#pragma omp simd
      for (int64_t j = 0; j < m; ++j) Store(&o[j], op(av, static_cast<float>(b[j])));
    } else {
      for (int64_t j = 0; j < m; ++j) {
        Store(&o[j], op(static_cast<float>(a[j * ia]), static_cast<float>(b[j * ib])));
      }
    }
  });
}

// What a binary op computes: a + alpha * b, or a * b.
struct BinaryKind {
  bool mul = false;
  float alpha = 1.0f;
};

// out[i] = op(a[i], b[i]) with broadcasting, computed in f32, where op is `kind` as a scalar
// function (BinaryRow's loops are compiled for it). `out` is contiguous with the broadcast shape;
// a and b may have any strides. Same-shape contiguous inputs take the vector BinaryChunk
// (simd_rows.h) where the CPU has one.
template <class T, class Op>
void BinaryBroadcastWith(const Tensor& a, const Tensor& b, Tensor& out, Op op, BinaryKind kind) {
  const int64_t n = out.numel();
  if (n == 0) return;
  T* __restrict o = out.data_ptr<T>();
  const T* __restrict pa = a.data_ptr<T>();
  const T* __restrict pb = b.data_ptr<T>();
  // Fast path: same shape, both contiguous.
  if (a.is_contiguous() && b.is_contiguous() && a.sizes() == out.sizes() &&
      b.sizes() == out.sizes()) {
    const bool stream = ShouldStream<T>(n);
#if OPREG_CPU_HAVE_SIMD_ROWS
    auto run = [&](auto chunk) {
      ParallelChunks(
          n,
          [&](int64_t begin, int64_t end) {
            chunk(pa + begin, pb + begin, o + begin, end - begin, kind, stream);
          },
          stream, kElementwiseGrain);
    };
    if (RunSimd(run, &avx512::BinaryChunk<T>, &avx2::BinaryChunk<T>)) return;
#endif
    ParallelChunks(
        n,
        [&](int64_t begin, int64_t end) {
          BinaryRow<T>(pa + begin, pb + begin, o + begin, end - begin, 1, 1, op, stream);
        },
        stream, kElementwiseGrain);
    return;
  }
  // General path: strides of a and b aligned to out's dims (0 where broadcast).
  const int64_t nd = out.dim();
  DimVector sizes(out.sizes().begin(), out.sizes().end());
  DimVector sa(static_cast<size_t>(nd), 0), sb(static_cast<size_t>(nd), 0);
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t da = d - (nd - a.dim()), db = d - (nd - b.dim());
    if (da >= 0 && a.size(da) != 1) sa[d] = a.stride(da);
    if (db >= 0 && b.size(db) != 1) sb[d] = b.stride(db);
  }
  const int64_t inner = nd == 0 ? 1 : sizes[nd - 1];
  const int64_t rows = n / inner;
  const int64_t ia = nd == 0 ? 0 : sa[nd - 1], ib = nd == 0 ? 0 : sb[nd - 1];
  const bool stream = ShouldStream<T>(n);
  ParallelRows(rows, n, stream, [&](int64_t r) {
    int64_t oa = 0, ob = 0, rem = r;
    for (int64_t d = nd - 2; d >= 0; --d) {
      const int64_t idx = rem % sizes[d];
      rem /= sizes[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    BinaryRow<T>(pa + oa, pb + ob, o + r * inner, inner, ia, ib, op, stream);
  }, kElementwiseGrain);
}

// out = kind(a, b) with broadcasting, computed in f32 (see BinaryBroadcastWith).
template <class T>
void BinaryBroadcast(const Tensor& a, const Tensor& b, Tensor& out, BinaryKind kind) {
  if (kind.mul) {
    BinaryBroadcastWith<T>(
        a, b, out, [](float x, float y) { return x * y; }, kind);
  } else if (kind.alpha == 1.0f) {
    BinaryBroadcastWith<T>(
        a, b, out, [](float x, float y) { return x + y; }, kind);
  } else {
    const float alpha = kind.alpha;
    BinaryBroadcastWith<T>(
        a, b, out, [alpha](float x, float y) { return x + alpha * y; }, kind);
  }
}

}  // namespace opreg::kernels::cpu::detail
