#include "opreg/kernels/cpu/split_add.h"

#include <algorithm>

#include "loops.h"
#include "half_convert.h"
#include "multiversion.h"
#include "simd/simd_rows.h"

namespace opreg::kernels::cpu {
namespace {

// `stream`: write the outputs with non-temporal stores (see kStreamBytes).
template <class T>
OPREG_CPU_MULTIVERSION void SplitAddChunk(const T* __restrict px, const T* __restrict py,
                                          T* __restrict ps, T* __restrict pd, int64_t n,
                                          bool stream) {
  if constexpr (std::is_same_v<T, Half>) {
    // f16: convert blocks with F16C (see half_convert.h), compute in f32.
    float fx[detail::kHalfBlock], fy[detail::kHalfBlock];
    for (int64_t i0 = 0; i0 < n; i0 += detail::kHalfBlock) {
      const int64_t m = std::min(detail::kHalfBlock, n - i0);
      detail::HalfToFloat(px + i0, fx, m);
      detail::HalfToFloat(py + i0, fy, m);
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) {
        const float a = fx[i], b = fy[i];
        fx[i] = a + b;
        fy[i] = a - b;
      }
      detail::StoreHalf(fx, ps + i0, m, stream);
      detail::StoreHalf(fy, pd + i0, m, stream);
    }
    return;
  }
  // Streamed: blocks computed into buffers, then copied out; otherwise one block, in place.
  detail::Buffer<T, detail::kStreamBlock> bs_buf, bd_buf;
  T* bs = bs_buf.get();
  T* bd = bd_buf.get();
  const int64_t step = stream ? detail::kStreamBlock : n;
  for (int64_t i0 = 0; i0 < n; i0 += step) {
    const int64_t m = std::min(step, n - i0);
    T* __restrict os = stream ? bs : ps + i0;
    T* __restrict od = stream ? bd : pd + i0;
    const T* __restrict x = px + i0;
    const T* __restrict y = py + i0;
#pragma omp simd
    for (int64_t i = 0; i < m; ++i) {
      const float a = static_cast<float>(x[i]), b = static_cast<float>(y[i]);
      detail::Store(&os[i], a + b);
      detail::Store(&od[i], a - b);
    }
    if (stream) {
      detail::StreamCopy(ps + i0, bs, m * static_cast<int64_t>(sizeof(T)));
      detail::StreamCopy(pd + i0, bd, m * static_cast<int64_t>(sizeof(T)));
    }
  }
}

}  // namespace

void SplitAddOut(const Tensor& x, const Tensor& y, Tensor& sum, Tensor& diff) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &y, &sum, &diff}) {
    detail::RequireCpuContiguous("SplitAddOut", *t, "every tensor");
  }
  detail::DispatchFloating(x.dtype(), "SplitAddOut", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    const T* py = y.data_ptr<T>();
    T* ps = sum.data_ptr<T>();
    T* pd = diff.data_ptr<T>();
    const bool stream = detail::ShouldStream<T>(2 * x.numel());
    auto run = [&](auto chunk) {
      detail::ParallelChunks(
          x.numel(),
          [&](int64_t begin, int64_t end) {
            chunk(px + begin, py + begin, ps + begin, pd + begin, end - begin, stream);
          },
          stream, detail::kElementwiseGrain);
    };
#if OPREG_CPU_HAVE_SIMD_ROWS
    if (detail::RunSimd(run, &avx512::SplitAddChunk<T>, &avx2::SplitAddChunk<T>)) return;
#endif
    run(&SplitAddChunk<T>);
  });
}

}  // namespace opreg::kernels::cpu
