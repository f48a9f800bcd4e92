// opreg::torch_stable: <torch/headeronly/core/Layout.h>. c10::Layout with torch's values.
#pragma once

#include <cstdint>

namespace c10 {
enum class Layout : int8_t {
  Strided = 0,
  Sparse = 1,
  SparseCsr = 2,
  Mkldnn = 3,
  SparseCsc = 4,
  SparseBsr = 5,
  SparseBsc = 6,
  Jagged = 7,
  NumOptions
};
constexpr Layout kStrided = Layout::Strided;
}  // namespace c10

namespace torch::headeronly {
using c10::kStrided;
using c10::Layout;
}  // namespace torch::headeronly
