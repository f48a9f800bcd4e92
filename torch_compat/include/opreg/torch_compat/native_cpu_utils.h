// opreg::torch_compat: the helpers of libtorch's ATen/native/cpu/utils.h that kernel
// libraries use: multi-dimensional index walking over a flattened range (data_index_init /
// data_index_step), stores of float vectors into 16-bit floats, load2f, CeilLog2 and a plain
// transpose. Errors: none. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>

#include "opreg/torch_compat/vec.h"

namespace at::native {

template <typename T>
inline void _store(T* dst, vec::Vectorized<T> src) {
  src.store(dst);
}
inline void _store(c10::BFloat16* dst, vec::Vectorized<float> src) {
  for (int i = 0; i < vec::Vectorized<float>::size(); ++i)
    dst[i] = static_cast<c10::BFloat16>(src[i]);
}
inline void _store(c10::Half* dst, vec::Vectorized<float> src) {
  for (int i = 0; i < vec::Vectorized<float>::size(); ++i) dst[i] = static_cast<c10::Half>(src[i]);
}

// Splits `offset` into the indices (x, ...) of dims of sizes (X, ...), last dim fastest;
// returns what is left above the first.
template <typename T>
inline T data_index_init(T offset) {
  return offset;
}
template <typename T, typename... Args>
inline T data_index_init(T offset, T& x, const T& X, Args&&... args) {
  offset = data_index_init(offset, std::forward<Args>(args)...);
  x = offset % X;
  return offset / X;
}

// Advances the indices by one (last dim fastest); true when they wrap around to all zeros.
inline bool data_index_step() { return true; }
template <typename T, typename... Args>
inline bool data_index_step(T& x, const T& X, Args&&... args) {
  if (data_index_step(std::forward<Args>(args)...)) {
    x = ((x + 1) == X) ? 0 : (x + 1);
    return x == 0;
  }
  return false;
}

// Two float vectors from 2 * Vectorized<float>::size() elements (or `count` of them).
template <typename T>
inline std::tuple<vec::Vectorized<float>, vec::Vectorized<float>> load2f(const T* ptr,
                                                                         int64_t count) {
  constexpr int64_t kLanes = vec::Vectorized<float>::size();
  float values[2 * kLanes] = {};
  for (int64_t i = 0; i < count && i < 2 * kLanes; ++i) values[i] = static_cast<float>(ptr[i]);
  return std::make_tuple(vec::Vectorized<float>::loadu(values),
                         vec::Vectorized<float>::loadu(values + kLanes));
}
template <typename T>
inline std::tuple<vec::Vectorized<float>, vec::Vectorized<float>> load2f(const T* ptr) {
  return load2f(ptr, 2 * vec::Vectorized<float>::size());
}

namespace utils {

// The smallest power-of-two exponent e with 2^e >= x (0 for x <= 1).
template <typename T>
T CeilLog2(const T& x) {
  if (x <= 2) return 1;
  T e = 0;
  while ((T(1) << e) < x) ++e;
  return e;
}

// dst[N, M] = src[M, N]^T with leading dimensions.
template <typename T>
inline void transpose(int64_t M, int64_t N, const T* src, int64_t ld_src, T* dst, int64_t ld_dst) {
  for (int64_t j = 0; j < N; ++j) {
    for (int64_t i = 0; i < M; ++i) dst[j * ld_dst + i] = src[i * ld_src + j];
  }
}

}  // namespace utils
}  // namespace at::native
