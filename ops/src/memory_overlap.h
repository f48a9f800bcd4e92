// Whether two strided views share a byte: the exact test behind ops::MemoryOverlaps.
#pragma once

#include <cstdint>

#include "absl/types/span.h"

namespace opreg::ops::internal {

// One strided view in bytes: `sizes` and `strides` (strides in bytes, any sign) over elements of
// `item_bytes` bytes each. Sizes are positive (empty views overlap nothing and are not asked).
using IntArrayRef = absl::Span<const int64_t>;

struct ByteView {
  IntArrayRef sizes;
  IntArrayRef byte_strides;
  int64_t item_bytes;
};

// True when some byte of an element of `a` is a byte of an element of `b`, where `b`'s first
// element starts `delta` bytes after `a`'s. Exact when its search stays small (always, for the
// views of one buffer that kernels are given: slices, transposes, interleaved rows), and true
// (overlap assumed) when the search would pass `max_steps` steps. Thread-safe; no heap
// allocation for views of up to 7 dims each.
bool ViewsShareAByte(const ByteView& a, const ByteView& b, int64_t delta,
                     int64_t max_steps = int64_t{1} << 16);

}  // namespace opreg::ops::internal
