// WrapDim: the dimension index rule of at::Tensor's methods (internal to torch_compat's sources).
#pragma once

#include <algorithm>
#include <cstdint>

#include "opreg/torch_compat/macros.h"

namespace at::detail {

// `dim` wrapped into [0, ndim) (a 0-dim tensor takes dims -1 and 0, as in libtorch); kIndex
// error naming the method otherwise.
inline int64_t WrapDim(int64_t dim, int64_t ndim, const char* method) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  TORCH_CHECK_INDEX(dim >= -n && dim < n, method, "(): Dimension out of range (expected to be in ",
                    "range of [", -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

}  // namespace at::detail
