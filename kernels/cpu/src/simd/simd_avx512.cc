// The row kernels of simd_rows.inc compiled for AVX-512 (see avx512.h); nothing where the
// AVX-512 paths are not built.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "binary.h"
#include "loops.h"
#include "half_convert.h"
#include "simd/avx512.h"
#include "simd/simd_rows.h"

#if OPREG_CPU_HAVE_AVX512
OPREG_CPU_AVX512_BEGIN
namespace opreg::kernels::cpu::avx512 {
#include "simd/simd_rows.inc"
}  // namespace opreg::kernels::cpu::avx512
OPREG_CPU_AVX512_END
#endif
