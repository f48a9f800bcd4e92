#include "opreg/kernels/cpu/silu_and_mul.h"

#include <algorithm>

#include "loops.h"
#include "half_convert.h"
#include "multiversion.h"
#include "simd/simd_rows.h"
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
    for (int64_t j0 = 0; j0 < d; j0 += detail::kHalfBlock) {
      const int64_t m = std::min(detail::kHalfBlock, d - j0);
      detail::HalfToFloat(a + j0, fa, m);
      detail::HalfToFloat(b + j0, fb, m);
#pragma omp simd
      for (int64_t j = 0; j < m; ++j) fa[j] = fa[j] / (1.0f + detail::ExpF(-fa[j])) * fb[j];
      detail::StoreHalf(fa, y + j0, m, stream);
    }
    return;
  }
  detail::FillBlocks(y, d, stream, [&](T* __restrict o, int64_t j0, int64_t m) {
    const T* __restrict ab = a + j0;
    const T* __restrict bb = b + j0;
#pragma omp simd
    for (int64_t j = 0; j < m; ++j) {
      const float av = static_cast<float>(ab[j]);
      detail::Store(&o[j], av / (1.0f + detail::ExpF(-av)) * static_cast<float>(bb[j]));
    }
  });
}

}  // namespace

void SiluAndMulOut(const Tensor& x, Tensor& out) {
  detail::RequireCpuContiguous("SiluAndMulOut", x, "x");
  detail::RequireCpuContiguous("SiluAndMulOut", out, "out");
  detail::DispatchFloating(x.dtype(), "SiluAndMulOut", [&](auto tag) {
    using T = decltype(tag);
    const int64_t d = out.size(-1), rows = detail::Rows(out);
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const bool stream = detail::ShouldStream<T>(rows * d);
    auto run = [&](auto row) {
      detail::ParallelRows(
          rows, rows * d, stream,
          [&](int64_t r) {
            const T* a = in + r * 2 * d;
            row(a, a + d, o + r * d, d, stream);
          },
          detail::kActivationGrain);
    };
#if OPREG_CPU_HAVE_SIMD_ROWS
    if (detail::RunSimd(run, &avx512::SiluAndMulRow<T>, &avx2::SiluAndMulRow<T>)) return;
#endif
    run(&SiluAndMulRow<T>);
  });
}

}  // namespace opreg::kernels::cpu
