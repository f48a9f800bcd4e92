// opreg::torch_compat: c10::SmallVector, a vector that keeps its first N elements inline (no
// heap allocation until it outgrows them), as absl::InlinedVector, which has the same
// interface for what kernels use (sized and filled construction, push_back, operator[],
// iteration, size, resize). Ownership and thread safety are std::vector's.
#pragma once

#include <algorithm>
#include <cstddef>

#include "absl/container/inlined_vector.h"

namespace c10 {

// libtorch's default inline capacity: as many elements as fit in 64 bytes, at least one.
template <typename T>
constexpr unsigned kSmallVectorDefaultInlined =
    static_cast<unsigned>(std::max<size_t>(1, 64 / sizeof(T)));

template <typename T, unsigned N = kSmallVectorDefaultInlined<T>>
using SmallVector = absl::InlinedVector<T, N>;

}  // namespace c10
