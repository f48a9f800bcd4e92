#include "opreg/kernels/cpu/per_token_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "loops.h"
#include "half_convert.h"
#include "multiversion.h"
#include "simd/simd_rows.h"
#include "vec_math.h"

namespace opreg::kernels::cpu {
namespace {

// Float8E4M3FN::FromFloat without branches, so the quantize loop vectorizes: every case is
// computed and selected. Same results for every input: round to nearest even, saturation to
// +-448 (inf included), NaN to S.1111.111.
inline uint8_t FloatToE4M3(float f) {
  using opreg::detail::BitsToFloat;
  using opreg::detail::FloatToBits;
  const uint32_t u = FloatToBits(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7fffffffu;
  // Normal results (|f| >= 2^-6): rebias the exponent (127 -> 7), then round to nearest even on
  // the 20 dropped mantissa bits; a carry into the exponent is correct, and anything above 448
  // (0x7e; 0x7f is NaN) saturates. No overflow: a <= 0x7fffffff.
  const uint32_t rebiased = a - (120u << 23);
  const uint32_t normal =
      std::min((rebiased + 0x7ffffu + ((rebiased >> 20) & 1u)) >> 20, uint32_t{0x7e});
  // Smaller results are multiples of the smallest subnormal 2^-9: adding 2^14 (whose ulp is
  // 2^-9) rounds the magnitude to one in round-to-nearest-even; its low bits are the encoding,
  // at most 8 (= 2^-6, the smallest normal, when rounding carries).
  constexpr uint32_t kMagic = (127u + 14u) << 23;
  const uint32_t small = FloatToBits(BitsToFloat(a) + BitsToFloat(kMagic)) - kMagic;
  const uint32_t mag = a > 0x7f800000u ? 0x7fu : (a < (121u << 23) ? small : normal);
  return static_cast<uint8_t>(sign | mag);
}

// Quantizes one row; returns its scale. `next`: the next row's bytes, prefetched after the
// absmax pass (null: none).
template <class T, class Q>
OPREG_CPU_ALWAYS_INLINE float QuantizeRowImpl(const T* __restrict row, Q* __restrict qrow,
                                              int64_t h, float qmax, const void* next,
                                              int64_t next_bytes) {
  const float absmax = detail::MaxOf(row, h, 0.0f, [](float v) { return std::fabs(v); });
  if (next != nullptr) detail::Prefetch(next, next_bytes);
  const float s = absmax / qmax;
  const float inv = s == 0.0f ? 0.0f : 1.0f / s;
  if constexpr (std::is_same_v<Q, int8_t>) {
#pragma omp simd
    for (int64_t j = 0; j < h; ++j) {
      // Clamp first: the magic-number rounding needs |v| < 2^22. std::min(127, std::max(-127, v))
      // as selects (NaN still becomes -127): GCC does not vectorize the reference-returning
      // std::min / std::max in an omp simd loop.
      float v = static_cast<float>(row[j]) * inv;
      v = -127.0f < v ? v : -127.0f;
      v = v < 127.0f ? v : 127.0f;
      // Through int32: GCC vectorizes float -> int32 -> int8, not float -> int8.
      qrow[j] = static_cast<int8_t>(static_cast<int32_t>(detail::RoundHalfEven(v)));
    }
  } else {
    uint8_t* __restrict bits = reinterpret_cast<uint8_t*>(qrow);
#pragma omp simd
    for (int64_t j = 0; j < h; ++j) bits[j] = FloatToE4M3(static_cast<float>(row[j]) * inv);
  }
  return s;
}

template <class T, class Q>
OPREG_CPU_ALWAYS_INLINE float QuantizeRowConverted(const T* __restrict row, Q* __restrict qrow,
                                                   int64_t h, float qmax) {
  if constexpr (!std::is_same_v<T, float>) {
    // The row is read twice (absmax, then quantize): convert it once (see kRowBuffer).
    if (h <= detail::kRowBuffer) {
      float f[detail::kRowBuffer];
      if constexpr (std::is_same_v<T, Half>) {
        detail::HalfToFloat(row, f, h);
      } else {
#pragma omp simd
        for (int64_t j = 0; j < h; ++j) f[j] = static_cast<float>(row[j]);
      }
      detail::Prefetch(row + h, h * static_cast<int64_t>(sizeof(T)));  // the next row
      return QuantizeRowImpl<float, Q>(f, qrow, h, qmax, nullptr, 0);
    }
  }
  const bool prefetch = h <= detail::kRowBuffer;
  return QuantizeRowImpl<T, Q>(row, qrow, h, qmax, prefetch ? row + h : nullptr,
                               h * static_cast<int64_t>(sizeof(T)));
}

// `stream`: write qrow with non-temporal stores (see kStreamBytes), through a row buffer.
template <class T, class Q>
OPREG_CPU_MULTIVERSION float QuantizeRow(const T* __restrict row, Q* __restrict qrow, int64_t h,
                                         float qmax, bool stream) {
  if (stream && h <= detail::kRowBuffer) {
    detail::Buffer<Q, detail::kRowBuffer> q_buf;
    Q* q = q_buf.get();
    const float s = QuantizeRowConverted<T, Q>(row, q, h, qmax);
    detail::StreamCopy(qrow, q, h * static_cast<int64_t>(sizeof(Q)));
    return s;
  }
  return QuantizeRowConverted<T, Q>(row, qrow, h, qmax);
}

template <class T, class Q>
void Quantize(const Tensor& x, Tensor& q, Tensor& scale, float qmax) {
  const int64_t h = x.size(-1), rows = detail::Rows(x);
  const T* in = x.data_ptr<T>();
  Q* out = q.data_ptr<Q>();
  float* sc = scale.data_ptr<float>();
  const bool stream = detail::ShouldStream<Q>(rows * h);
#if OPREG_CPU_HAVE_SIMD_ROWS
  if constexpr (std::is_same_v<Q, int8_t>) {
    auto run = [&](auto row) {
      detail::ParallelRows(rows, rows * h, stream,
                           [&](int64_t r) { sc[r] = row(in + r * h, out + r * h, h, stream); });
    };
    if (detail::RunSimd(run, &avx512::QuantizeRowInt8<T>, &avx2::QuantizeRowInt8<T>)) return;
  }
#endif
  detail::ParallelRows(rows, rows * h, stream, [&](int64_t r) {
    sc[r] = QuantizeRow<T, Q>(in + r * h, out + r * h, h, qmax, stream);
  });
}

}  // namespace

void PerTokenQuantOut(const Tensor& x, Tensor& q, Tensor& scale) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &q, &scale}) {
    detail::RequireCpuContiguous("PerTokenQuantOut", *t, "every tensor");
  }
  detail::DispatchFloating(x.dtype(), "PerTokenQuantOut", [&](auto tag) {
    using T = decltype(tag);
    if (q.dtype() == DType::kInt8) {
      Quantize<T, int8_t>(x, q, scale, 127.0f);
    } else if (q.dtype() == DType::kFloat8E4M3FN) {
      Quantize<T, Float8E4M3FN>(x, q, scale, 448.0f);
    } else {
      OPREG_THROW(kType, "PerTokenQuantOut: unsupported output dtype ", DTypeName(q.dtype()));
    }
  });
}

}  // namespace opreg::kernels::cpu
