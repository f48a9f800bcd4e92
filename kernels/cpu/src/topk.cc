#include "opreg/kernels/cpu/topk.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "loops.h"

namespace opreg::kernels::cpu {

void TopkOut(const Tensor& x, int64_t k, int64_t dim, bool largest, Tensor& values,
             Tensor& indices) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &values, &indices}) {
    detail::RequireCpuContiguous("TopkOut", *t, "every tensor");
  }
  if (k == 0 || x.numel() == 0) return;
  detail::DispatchFloating(x.dtype(), "TopkOut", [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = x.size(dim);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    const int64_t slices = outer * inner;
    const T* __restrict in = x.data_ptr<T>();
    T* __restrict vals = values.data_ptr<T>();
    int64_t* __restrict idxs = indices.data_ptr<int64_t>();
    using P = std::pair<float, int64_t>;
    // a before b: larger (smaller) first, NaN counting as the largest; ties by lower index.
    auto before = [largest](const P& a, const P& b) {
      const bool an = std::isnan(a.first), bn = std::isnan(b.first);
      if (an || bn) return an && bn ? a.second < b.second : (largest ? an : bn);
      if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
      return a.second < b.second;
    };
    detail::ParallelFor(slices, slices * n, [&](int64_t s) {
      // Per-thread scratch, grown on demand and reused across calls: no allocation once warm.
      thread_local std::vector<P> buf;
      buf.resize(static_cast<size_t>(n));
      const int64_t o = s / inner, i = s % inner;
      const T* base = in + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) buf[j] = {static_cast<float>(base[j * inner]), j};
      if (k < n) {
        std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), before);
      } else {
        std::sort(buf.begin(), buf.end(), before);
      }
      T* vout = vals + o * k * inner + i;
      int64_t* iout = idxs + o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        vout[j * inner] = base[buf[j].second * inner];
        iout[j * inner] = buf[j].second;
      }
    });
  });
}

}  // namespace opreg::kernels::cpu
