// Shape checks of the one-block-per-row CUDA launchers (private to kernels/cuda/src).
#pragma once

#include <cstdint>

#include "device_helpers.cuh"

namespace opreg {
namespace kernels {
namespace cuda {
namespace detail {

// input viewed as [rows, hidden] with hidden = input.size(-1).
struct RowShape {
  int64_t rows = 0;
  int64_t hidden = 0;
  unsigned grid() const { return static_cast<unsigned>(rows); }
};

// input: a contiguous CUDA tensor with at least 1 dim and at most 2^31 - 1 rows (one block per
// row); weight (when defined): a contiguous [hidden] CUDA tensor of input's dtype.
inline RowShape CheckRowOp(const Tensor& input, const Tensor& weight, const char* name) {
  CheckCudaTensor(input, name, "input");
  CheckContiguous(input, name, "input");
  OPREG_CHECK_VALUE(input.dim() >= 1, name, "(): 'input' must have at least 1 dim");
  RowShape rs;
  rs.hidden = input.size(-1);
  rs.rows = rs.hidden == 0 ? 0 : input.numel() / rs.hidden;
  OPREG_CHECK_VALUE(rs.rows <= INT32_MAX, name, "(): ", rs.rows,
                    " rows exceed the CUDA grid limit (2^31 - 1 blocks)");
  if (weight.defined()) {
    CheckCudaTensor(weight, name, "weight");
    CheckContiguous(weight, name, "weight");
    CheckSameDType(input, weight, name, "input", "weight");
    OPREG_CHECK_VALUE(weight.dim() == 1 && weight.size(0) == rs.hidden, name,
                      "(): 'weight' must have shape [", rs.hidden, "], got ", weight.ToString());
  }
  return rs;
}

}  // namespace detail
}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
