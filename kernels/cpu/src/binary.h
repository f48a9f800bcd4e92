// Internal: the broadcasting binary elementwise loop shared by add and mul.
#pragma once

#include <cstdint>

#include "common.h"

namespace opreg::kernels::cpu::detail {

// out[i] = op(a[i], b[i]) with broadcasting, computed in f32. `out` is contiguous with the
// broadcast shape; a and b may have any strides.
template <class T, class Op>
void BinaryBroadcast(const Tensor& a, const Tensor& b, Tensor& out, Op op) {
  const int64_t n = out.numel();
  if (n == 0) return;
  T* __restrict o = out.data_ptr<T>();
  const T* __restrict pa = a.data_ptr<T>();
  const T* __restrict pb = b.data_ptr<T>();
  // Fast path: same shape, both contiguous.
  if (a.is_contiguous() && b.is_contiguous() && a.sizes() == out.sizes() &&
      b.sizes() == out.sizes()) {
#pragma omp parallel for simd if (n > kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      Store(&o[i], op(static_cast<float>(pa[i]), static_cast<float>(pb[i])));
    }
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
#pragma omp parallel for if (n > kParallelGrain) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t oa = 0, ob = 0, rem = r;
    for (int64_t d = nd - 2; d >= 0; --d) {
      const int64_t idx = rem % sizes[d];
      rem /= sizes[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    T* __restrict orow = o + r * inner;
    const T* __restrict ar = pa + oa;
    const T* __restrict br = pb + ob;
    if (ia == 1 && ib == 1) {
#pragma omp simd
      for (int64_t j = 0; j < inner; ++j) {
        Store(&orow[j], op(static_cast<float>(ar[j]), static_cast<float>(br[j])));
      }
    } else if (ia == 1 && ib == 0) {
      const float bv = static_cast<float>(br[0]);
#pragma omp simd
      for (int64_t j = 0; j < inner; ++j) Store(&orow[j], op(static_cast<float>(ar[j]), bv));
    } else if (ia == 0 && ib == 1) {
      const float av = static_cast<float>(ar[0]);
#pragma omp simd
      for (int64_t j = 0; j < inner; ++j) Store(&orow[j], op(av, static_cast<float>(br[j])));
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        Store(&orow[j], op(static_cast<float>(ar[j * ia]), static_cast<float>(br[j * ib])));
      }
    }
  }
}

}  // namespace opreg::kernels::cpu::detail
