#include "opreg/kernels/cpu/silu_and_mul.h"

#include <algorithm>

#include "avx2.h"
#include "avx512.h"
#include "common.h"
#include "half_convert.h"
#include "multiversion.h"
#include "vec_math.h"

namespace opreg::kernels::cpu {
namespace {

// y = silu(a) * b over one row.
template <class T>
OPREG_CPU_MULTIVERSION void SiluAndMulRow(const T* __restrict a, const T* __restrict b,
                                          T* __restrict y, int64_t d, bool stream) {
  if constexpr (std::is_same_v<T, Half>) {
    // f16: convert blocks with F16C (see half_convert.h), compute in f32.
    float fa[detail::kHalfBlock], fb[detail::kHalfBlock];
    detail::Buffer<Half, detail::kHalfBlock> hy_buf;
    Half* hy = hy_buf.get();
    for (int64_t j0 = 0; j0 < d; j0 += detail::kHalfBlock) {
      const int64_t m = std::min(detail::kHalfBlock, d - j0);
      detail::HalfToFloat(a + j0, fa, m);
      detail::HalfToFloat(b + j0, fb, m);
#pragma omp simd
      for (int64_t j = 0; j < m; ++j) fa[j] = fa[j] / (1.0f + detail::ExpF(-fa[j])) * fb[j];
      if (stream) {
        detail::FloatToHalf(fa, hy, m);
        detail::StreamCopy(y + j0, hy, m * static_cast<int64_t>(sizeof(Half)));
      } else {
        detail::FloatToHalf(fa, y + j0, m);
      }
    }
    return;
  }
  // Streamed: blocks computed into buf, then copied out; otherwise one block, in place.
  detail::Buffer<T, detail::kStreamBlock> buf_storage;
  T* buf = buf_storage.get();
  const int64_t step = stream ? detail::kStreamBlock : d;
  for (int64_t j0 = 0; j0 < d; j0 += step) {
    const int64_t m = std::min(step, d - j0);
    T* __restrict o = stream ? buf : y + j0;
    const T* __restrict ab = a + j0;
    const T* __restrict bb = b + j0;
#pragma omp simd
    for (int64_t j = 0; j < m; ++j) {
      const float av = static_cast<float>(ab[j]);
      detail::Store(&o[j], av / (1.0f + detail::ExpF(-av)) * static_cast<float>(bb[j]));
    }
    if (stream) detail::StreamCopy(y + j0, buf, m * static_cast<int64_t>(sizeof(T)));
  }
}

#if OPREG_CPU_HAVE_AVX512
OPREG_CPU_AVX512_BEGIN
// The same row with AVX-512 (see avx512.h): one pass, conversions in registers. Rows are
// a = x[r, :d], b = x[r, d:], so a's and b's prefetches (kPrefetchBytes ahead) step over the other
// half into the next row, which lies right after b: the next row starts with its data in cache.
template <class T>
void SiluAndMulRowAvx512(const T* __restrict a, const T* __restrict b, T* __restrict y, int64_t d,
                         bool stream) {
  constexpr int64_t kAhead = detail::kPrefetchBytes / static_cast<int64_t>(sizeof(T));
  avx512::StoreEach(y, d, stream, [&](int64_t j, avx512::Mask k) {
    const int64_t ahead = j + kAhead < d ? j + kAhead : j + kAhead + d;
    _mm_prefetch(reinterpret_cast<const char*>(a + ahead), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + ahead), _MM_HINT_T0);
    return _mm512_mul_ps(avx512::Silu<T>(avx512::Load(a + j, k)), avx512::Load(b + j, k));
  });
}
OPREG_CPU_AVX512_END
#endif

#if OPREG_CPU_HAVE_AVX2
OPREG_CPU_AVX2_BEGIN
// The same row with AVX2 (see avx2.h) for CPUs without AVX-512, prefetching as above.
template <class T>
void SiluAndMulRowAvx2(const T* __restrict a, const T* __restrict b, T* __restrict y, int64_t d,
                       bool stream) {
  constexpr int64_t kAhead = detail::kPrefetchBytes / static_cast<int64_t>(sizeof(T));
  avx2::StoreEach(y, d, stream, [&](int64_t j, int64_t m) {
    const int64_t ahead = j + kAhead < d ? j + kAhead : j + kAhead + d;
    _mm_prefetch(reinterpret_cast<const char*>(a + ahead), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + ahead), _MM_HINT_T0);
    return _mm256_mul_ps(avx2::Silu<T>(avx2::LoadN(a + j, m)), avx2::LoadN(b + j, m));
  });
}
OPREG_CPU_AVX2_END
#endif

}  // namespace

void SiluAndMulCpu(const Tensor& x, Tensor& out) {
  detail::RequireCpuContiguous("SiluAndMulCpu", x, "x");
  detail::RequireCpuContiguous("SiluAndMulCpu", out, "out");
  detail::DispatchFloating(x.dtype(), "SiluAndMulCpu", [&](auto tag) {
    using T = decltype(tag);
    const int64_t d = out.size(-1), rows = detail::Rows(out);
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const bool stream = detail::ShouldStream<T>(rows * d);
#if OPREG_CPU_HAVE_AVX512
    if (avx512::Supported()) {
      avx512::WithElementType<T>([&](auto tag) {
        using E = decltype(tag);
        const E* ein = reinterpret_cast<const E*>(in);
        E* eo = reinterpret_cast<E*>(o);
        detail::ParallelRows(rows, rows * d, stream, [&](int64_t r) {
          const E* a = ein + r * 2 * d;
          SiluAndMulRowAvx512<E>(a, a + d, eo + r * d, d, stream);
        });
      });
      return;
    }
#endif
#if OPREG_CPU_HAVE_AVX2
    if (avx2::Supported()) {
      detail::ParallelRows(rows, rows * d, stream, [&](int64_t r) {
        const T* a = in + r * 2 * d;
        SiluAndMulRowAvx2<T>(a, a + d, o + r * d, d, stream);
      });
      return;
    }
#endif
    detail::ParallelRows(rows, rows * d, stream, [&](int64_t r) {
      const T* a = in + r * 2 * d;
      SiluAndMulRow<T>(a, a + d, o + r * d, d, stream);
    });
  });
}

}  // namespace opreg::kernels::cpu
