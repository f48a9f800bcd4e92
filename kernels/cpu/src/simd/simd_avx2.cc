// The row kernels of simd_rows.inc compiled for AVX2 (see avx2.h); nothing where the
// AVX2 paths are not built.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "binary.h"
#include "loops.h"
#include "half_convert.h"
#include "simd/avx2.h"
#include "simd/simd_rows.h"

#if OPREG_CPU_HAVE_AVX2
OPREG_CPU_AVX2_BEGIN
namespace opreg::kernels::cpu::avx2 {
#include "simd/simd_rows.inc"
}  // namespace opreg::kernels::cpu::avx2
OPREG_CPU_AVX2_END
#endif
