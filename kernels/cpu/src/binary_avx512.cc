// The AVX-512 loop of add and mul (see binary.h), and its stub where it is not built.
#include "avx512.h"
#include "binary.h"

namespace opreg::kernels::cpu::detail {

#if OPREG_CPU_HAVE_AVX512
OPREG_CPU_AVX512_BEGIN
template <class T>
void BinaryChunkAvx512(const T* a, const T* b, T* o, int64_t n, BinaryKind kind, bool stream) {
  avx512::WithElementType<T>([&](auto tag) {
    using E = decltype(tag);
    const E* ea = reinterpret_cast<const E*>(a);
    const E* eb = reinterpret_cast<const E*>(b);
    E* eo = reinterpret_cast<E*>(o);
    if (kind.mul) {
      avx512::StoreEach(eo, n, stream, [&](int64_t j, avx512::Mask k) {
        return _mm512_mul_ps(avx512::Load(ea + j, k), avx512::Load(eb + j, k));
      });
    } else if (kind.alpha == 1.0f) {
      avx512::StoreEach(eo, n, stream, [&](int64_t j, avx512::Mask k) {
        return _mm512_add_ps(avx512::Load(ea + j, k), avx512::Load(eb + j, k));
      });
    } else {
      // x + alpha * y in one rounding, as the contracted scalar loop computes it.
      const __m512 alpha = _mm512_set1_ps(kind.alpha);
      avx512::StoreEach(eo, n, stream, [&](int64_t j, avx512::Mask k) {
        return _mm512_fmadd_ps(alpha, avx512::Load(eb + j, k), avx512::Load(ea + j, k));
      });
    }
  });
}
OPREG_CPU_AVX512_END
#else
template <class T>
void BinaryChunkAvx512(const T*, const T*, T*, int64_t, BinaryKind, bool) {
  OPREG_THROW(kRuntime, "BinaryChunkAvx512: the AVX-512 kernels are not built for this compiler");
}
#endif

template void BinaryChunkAvx512<float>(const float*, const float*, float*, int64_t, BinaryKind,
                                       bool);
template void BinaryChunkAvx512<Half>(const Half*, const Half*, Half*, int64_t, BinaryKind, bool);
template void BinaryChunkAvx512<BFloat16>(const BFloat16*, const BFloat16*, BFloat16*, int64_t,
                                          BinaryKind, bool);

}  // namespace opreg::kernels::cpu::detail
