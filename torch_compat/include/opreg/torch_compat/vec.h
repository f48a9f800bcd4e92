// opreg::torch_compat: libtorch's at::vec::Vectorized<T> (ATen/cpu/vec/vec.h), the portable
// form a kernel library gets when it includes torch's header without defining one of torch's
// CPU_CAPABILITY_* macros: a 32-byte value of 32 / sizeof(T) lanes with element-wise
// operations, which the compiler vectorises for the target's instruction set. Lane counts,
// rounding (BFloat16 / Half lanes compute in float and round after each operation) and the
// results of the math functions (the <cmath> function per lane) are libtorch's for that form,
// so a kernel gets the same bits on either runtime.
//
// Not provided: the AVX2 / AVX-512 register forms torch selects with CPU_CAPABILITY_AVX2 /
// _AVX512 (conversions to and from __m256 / __m512), and the complex and quantized lanes.
// Errors: none (like libtorch's, out-of-range lane counts are the caller's bug).
// Thread safety: values; no shared state.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <type_traits>

#include "opreg/torch_compat/scalar_type.h"
// As torch's vec headers do: std::exp(h) etc. of Half / BFloat16 return the 16-bit type.
#include "torch/headeronly/util/BFloat16-math.h"

namespace at::vec {

// The byte width of a Vectorized without a CPU_CAPABILITY (torch's VECTOR_WIDTH there).
constexpr int kVectorWidth = 32;

using ::c10::is_reduced_floating_point;
using ::c10::is_reduced_floating_point_v;

template <typename T>
struct is_floating_point
    : std::integral_constant<bool, std::is_floating_point_v<T> || is_reduced_floating_point_v<T>> {
};
template <typename T>
constexpr bool is_floating_point_v = is_floating_point<T>::value;

namespace detail {

// The lane type arithmetic runs in: float for the 16-bit floating types, T otherwise.
template <typename T>
using OpMath = std::conditional_t<is_reduced_floating_point_v<T>, float, T>;

// A lane whose bits are all ones (true) or all zeros (false), as torch's comparisons return.
template <typename T>
T MaskLane(bool on) {
  T out;
  std::memset(static_cast<void*>(&out), on ? 0xff : 0, sizeof(T));
  return out;
}

template <typename T>
bool LaneBitsSet(const T& v) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  for (unsigned char b : bytes) {
    if (b != 0) return true;
  }
  return false;
}

// NaN-propagating max / min (torch's maximum / minimum).
template <typename T>
T MaxPropagatingNan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a > b ? a : b;
}
template <typename T>
T MinPropagatingNan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? a : b;
}

}  // namespace detail

template <typename T>
class Vectorized {
  static constexpr int kLanes = kVectorWidth / static_cast<int>(sizeof(T));
  using Op = detail::OpMath<T>;

 public:
  using value_type = T;
  using size_type = int;

  static constexpr size_type size() { return kLanes; }

  Vectorized() : values_{} {}
  Vectorized(T value) {  // NOLINT(google-explicit-constructor): torch broadcasts implicitly
    for (int i = 0; i < kLanes; ++i) values_[i] = value;
  }
  template <typename... Args,
            typename = std::enable_if_t<(sizeof...(Args) == kLanes) && (kLanes > 1)>>
  Vectorized(Args... vals) : values_{static_cast<T>(vals)...} {}  // NOLINT

  // `count` lanes from `ptr` (any alignment); the others are zero.
  static Vectorized loadu(const void* ptr, int64_t count = size()) {
    Vectorized out;
    std::memcpy(out.values_, ptr, static_cast<size_t>(count) * sizeof(T));
    return out;
  }
  static Vectorized load(const void* ptr, int64_t count = size()) { return loadu(ptr, count); }
  // The first `count` lanes to `ptr` (any alignment).
  void store(void* ptr, int count = size()) const {
    std::memcpy(ptr, values_, static_cast<size_t>(count) * sizeof(T));
  }

  const T& operator[](int idx) const { return values_[idx]; }
  T& operator[](int idx) { return values_[idx]; }

  // base, base + step, base + 2 * step, ...
  template <typename Step = T>
  static Vectorized arange(T base = static_cast<T>(0), Step step = static_cast<Step>(1)) {
    Vectorized out;
    for (int i = 0; i < kLanes; ++i) {
      out.values_[i] = static_cast<T>(static_cast<Op>(base) + static_cast<Op>(i * step));
    }
    return out;
  }
  // Lane i from b where `mask`'s lane i has any bit set, else from a.
  static Vectorized blendv(const Vectorized& a, const Vectorized& b, const Vectorized& mask) {
    Vectorized out;
    for (int i = 0; i < kLanes; ++i) {
      out.values_[i] = detail::LaneBitsSet(mask.values_[i]) ? b.values_[i] : a.values_[i];
    }
    return out;
  }
  // Lane i from b where bit i of `mask` is set, else from a.
  template <int64_t mask>
  static Vectorized blend(const Vectorized& a, const Vectorized& b) {
    Vectorized out;
    for (int i = 0; i < kLanes; ++i) {
      out.values_[i] = ((mask >> i) & 1) != 0 ? b.values_[i] : a.values_[i];
    }
    return out;
  }
  // The first `count` lanes from b, the rest from a.
  static Vectorized set(const Vectorized& a, const Vectorized& b, int64_t count = size()) {
    Vectorized out = a;
    for (int i = 0; i < count && i < kLanes; ++i) out.values_[i] = b.values_[i];
    return out;
  }

  // A bit per lane: set where the lane equals zero.
  int zero_mask() const {
    int mask = 0;
    for (int i = 0; i < kLanes; ++i) {
      if (static_cast<Op>(values_[i]) == static_cast<Op>(0)) mask |= 1 << i;
    }
    return mask;
  }

  template <typename Fn>
  Vectorized map(Fn&& fn) const {
    Vectorized out;
    for (int i = 0; i < kLanes; ++i) {
      out.values_[i] = static_cast<T>(fn(static_cast<Op>(values_[i])));
    }
    return out;
  }

  Vectorized abs() const {
    return map([](Op x) { return x < Op(0) ? -x : x; });
  }
  Vectorized neg() const {
    return map([](Op x) { return -x; });
  }
  Vectorized exp() const {
    return map([](Op x) { return std::exp(x); });
  }
  Vectorized exp2() const {
    return map([](Op x) { return std::exp2(x); });
  }
  Vectorized expm1() const {
    return map([](Op x) { return std::expm1(x); });
  }
  // torch's faster exp variants; here the same std::exp (torch's portable form does this too).
  Vectorized exp_u20() const { return exp(); }
  Vectorized fexp_u20() const { return exp(); }
  Vectorized log() const {
    return map([](Op x) { return std::log(x); });
  }
  Vectorized log2() const {
    return map([](Op x) { return std::log2(x); });
  }
  Vectorized log10() const {
    return map([](Op x) { return std::log10(x); });
  }
  Vectorized log1p() const {
    return map([](Op x) { return std::log1p(x); });
  }
  Vectorized sin() const {
    return map([](Op x) { return std::sin(x); });
  }
  Vectorized cos() const {
    return map([](Op x) { return std::cos(x); });
  }
  Vectorized tan() const {
    return map([](Op x) { return std::tan(x); });
  }
  Vectorized tanh() const {
    return map([](Op x) { return std::tanh(x); });
  }
  Vectorized erf() const {
    return map([](Op x) { return std::erf(x); });
  }
  Vectorized sqrt() const {
    return map([](Op x) { return std::sqrt(x); });
  }
  Vectorized rsqrt() const {
    return map([](Op x) { return Op(1) / std::sqrt(x); });
  }
  Vectorized reciprocal() const {
    return map([](Op x) { return Op(1) / x; });
  }
  Vectorized floor() const {
    return map([](Op x) { return std::floor(x); });
  }
  Vectorized ceil() const {
    return map([](Op x) { return std::ceil(x); });
  }
  Vectorized round() const {
    return map([](Op x) { return std::nearbyint(x); });
  }
  Vectorized trunc() const {
    return map([](Op x) { return std::trunc(x); });
  }
  Vectorized frac() const {
    return map([](Op x) { return x - std::trunc(x); });
  }
  Vectorized pow(const Vectorized& e) const {
    return Binary(e, [](Op a, Op b) { return std::pow(a, b); });
  }
  Vectorized fmod(const Vectorized& d) const {
    return Binary(d, [](Op a, Op b) { return std::fmod(a, b); });
  }
  Vectorized isnan() const {
    Vectorized out;
    for (int i = 0; i < kLanes; ++i) {
      out.values_[i] =
          detail::MaskLane<T>(static_cast<Op>(values_[i]) != static_cast<Op>(values_[i]));
    }
    return out;
  }

  // Comparisons as masks (a lane of all ones where true), torch's operator form ...
  Vectorized operator==(const Vectorized& o) const { return Compare(o, std::equal_to<Op>()); }
  Vectorized operator!=(const Vectorized& o) const { return Compare(o, std::not_equal_to<Op>()); }
  Vectorized operator<(const Vectorized& o) const { return Compare(o, std::less<Op>()); }
  Vectorized operator<=(const Vectorized& o) const { return Compare(o, std::less_equal<Op>()); }
  Vectorized operator>(const Vectorized& o) const { return Compare(o, std::greater<Op>()); }
  Vectorized operator>=(const Vectorized& o) const { return Compare(o, std::greater_equal<Op>()); }
  // ... and as 1 / 0 values, torch's method form.
  Vectorized eq(const Vectorized& o) const { return CompareValue(o, std::equal_to<Op>()); }
  Vectorized ne(const Vectorized& o) const { return CompareValue(o, std::not_equal_to<Op>()); }
  Vectorized lt(const Vectorized& o) const { return CompareValue(o, std::less<Op>()); }
  Vectorized le(const Vectorized& o) const { return CompareValue(o, std::less_equal<Op>()); }
  Vectorized gt(const Vectorized& o) const { return CompareValue(o, std::greater<Op>()); }
  Vectorized ge(const Vectorized& o) const { return CompareValue(o, std::greater_equal<Op>()); }

  template <typename Fn>
  Vectorized Binary(const Vectorized& o, Fn&& fn) const {
    Vectorized out;
    for (int i = 0; i < kLanes; ++i) {
      out.values_[i] =
          static_cast<T>(fn(static_cast<Op>(values_[i]), static_cast<Op>(o.values_[i])));
    }
    return out;
  }

 private:
  template <typename Cmp>
  Vectorized Compare(const Vectorized& o, Cmp cmp) const {
    Vectorized out;
    for (int i = 0; i < kLanes; ++i) {
      out.values_[i] =
          detail::MaskLane<T>(cmp(static_cast<Op>(values_[i]), static_cast<Op>(o.values_[i])));
    }
    return out;
  }
  template <typename Cmp>
  Vectorized CompareValue(const Vectorized& o, Cmp cmp) const {
    Vectorized out;
    for (int i = 0; i < kLanes; ++i) {
      out.values_[i] =
          static_cast<T>(cmp(static_cast<Op>(values_[i]), static_cast<Op>(o.values_[i])) ? 1 : 0);
    }
    return out;
  }

  alignas(kVectorWidth) T values_[kLanes];
};

#define OPREG_VEC_BINARY_(op)                                                            \
  template <typename T>                                                                  \
  Vectorized<T> operator op(const Vectorized<T>& a, const Vectorized<T>& b) {            \
    return a.Binary(b, [](detail::OpMath<T> x, detail::OpMath<T> y) { return x op y; }); \
  }
OPREG_VEC_BINARY_(+)
OPREG_VEC_BINARY_(-)
OPREG_VEC_BINARY_(*)
OPREG_VEC_BINARY_(/)
#undef OPREG_VEC_BINARY_

template <typename T>
Vectorized<T>& operator+=(Vectorized<T>& a, const Vectorized<T>& b) {
  return a = a + b;
}
template <typename T>
Vectorized<T>& operator-=(Vectorized<T>& a, const Vectorized<T>& b) {
  return a = a - b;
}
template <typename T>
Vectorized<T>& operator*=(Vectorized<T>& a, const Vectorized<T>& b) {
  return a = a * b;
}
template <typename T>
Vectorized<T>& operator/=(Vectorized<T>& a, const Vectorized<T>& b) {
  return a = a / b;
}
template <typename T>
Vectorized<T> operator-(const Vectorized<T>& a) {
  return a.neg();
}

// Bitwise operations on the lanes' bits (masks from comparisons combine with these).
#define OPREG_VEC_BITWISE_(op)                                                              \
  template <typename T>                                                                     \
  Vectorized<T> operator op(const Vectorized<T>& a, const Vectorized<T>& b) {               \
    Vectorized<T> out;                                                                      \
    unsigned char x[kVectorWidth], y[kVectorWidth];                                         \
    a.store(x);                                                                             \
    b.store(y);                                                                             \
    for (int i = 0; i < kVectorWidth; ++i) x[i] = static_cast<unsigned char>(x[i] op y[i]); \
    return Vectorized<T>::loadu(x);                                                         \
  }
OPREG_VEC_BITWISE_(&)
OPREG_VEC_BITWISE_(|)
OPREG_VEC_BITWISE_(^)
#undef OPREG_VEC_BITWISE_

template <typename T>
Vectorized<T> maximum(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.Binary(b, [](auto x, auto y) { return detail::MaxPropagatingNan(x, y); });
}
template <typename T>
Vectorized<T> minimum(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.Binary(b, [](auto x, auto y) { return detail::MinPropagatingNan(x, y); });
}
template <typename T>
Vectorized<T> clamp(const Vectorized<T>& a, const Vectorized<T>& min, const Vectorized<T>& max) {
  return minimum(max, maximum(min, a));
}
template <typename T>
Vectorized<T> clamp_min(const Vectorized<T>& a, const Vectorized<T>& min) {
  return maximum(min, a);
}
template <typename T>
Vectorized<T> clamp_max(const Vectorized<T>& a, const Vectorized<T>& max) {
  return minimum(max, a);
}
// a * b + c, rounded once per operation as torch's portable form does (no fused rounding).
template <typename T>
Vectorized<T> fmadd(const Vectorized<T>& a, const Vectorized<T>& b, const Vectorized<T>& c) {
  return a * b + c;
}
template <typename T>
Vectorized<T> fmsub(const Vectorized<T>& a, const Vectorized<T>& b, const Vectorized<T>& c) {
  return a * b - c;
}

// ---- 16-bit floating lanes to and from float ----

// The two float halves of a BFloat16 / Half vector.
template <typename T, typename = std::enable_if_t<is_reduced_floating_point_v<T>>>
std::tuple<Vectorized<float>, Vectorized<float>> convert_to_float(const Vectorized<T>& a) {
  constexpr int kHalf = Vectorized<float>::size();
  float lo[kHalf], hi[kHalf];
  for (int i = 0; i < kHalf; ++i) {
    lo[i] = static_cast<float>(a[i]);
    hi[i] = static_cast<float>(a[i + kHalf]);
  }
  return std::make_tuple(Vectorized<float>::loadu(lo), Vectorized<float>::loadu(hi));
}

// One BFloat16 / Half vector from two float vectors (round to nearest even).
template <typename T, typename = std::enable_if_t<is_reduced_floating_point_v<T>>>
Vectorized<T> convert_from_float(const Vectorized<float>& a, const Vectorized<float>& b) {
  constexpr int kHalf = Vectorized<float>::size();
  T out[2 * kHalf];
  for (int i = 0; i < kHalf; ++i) {
    out[i] = static_cast<T>(a[i]);
    out[i + kHalf] = static_cast<T>(b[i]);
  }
  return Vectorized<T>::loadu(out);
}

// Float vectors from 16-bit floats in memory: one vector's worth, or two.
namespace detail {
template <typename T>
void LoadFp32(const T* data, Vectorized<float>& out) {
  for (int i = 0; i < Vectorized<float>::size(); ++i) out[i] = static_cast<float>(data[i]);
}
}  // namespace detail
inline void load_fp32_from_bf16(const c10::BFloat16* data, Vectorized<float>& out) {
  detail::LoadFp32(data, out);
}
inline void load_fp32_from_bf16(const c10::BFloat16* data, Vectorized<float>& out1,
                                Vectorized<float>& out2) {
  detail::LoadFp32(data, out1);
  detail::LoadFp32(data + Vectorized<float>::size(), out2);
}
inline void load_fp32_from_fp16(const c10::Half* data, Vectorized<float>& out) {
  detail::LoadFp32(data, out);
}
inline void load_fp32_from_fp16(const c10::Half* data, Vectorized<float>& out1,
                                Vectorized<float>& out2) {
  detail::LoadFp32(data, out1);
  detail::LoadFp32(data + Vectorized<float>::size(), out2);
}

// n elements of src to dst, converted (static_cast per element).
template <typename Src, typename Dst>
void convert(const Src* src, Dst* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(src[i]);
}

}  // namespace at::vec
