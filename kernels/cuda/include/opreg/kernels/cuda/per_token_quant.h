// CUDA launcher of opreg::per_token_quant.out: per-row dynamic quantization of x viewed as
// [rows, H], with the CPU kernel's conventions (kernels/cpu/per_token_quant.h):
//   absmax = max |x[r, :]|; scale[r] = absmax / qmax (127 for i8, 448 for f8e4m3fn);
//   q = x / scale: i8 rounded to nearest even and clamped to [-127, 127]; f8e4m3fn converted
//   with saturation (__NV_SATFINITE). A row of zeros gets scale 0 and q 0.
//
// One block per row: absmax by warp-shuffle + block reduction, then a quantizing pass (the row
// is re-read). 16-byte vectorized input loads when H is a multiple of 16 / itemsize and the
// pointers are aligned, scalar otherwise. x: contiguous f32/f16/bf16 CUDA tensor; q: contiguous,
// x's shape, dtype i8 or f8e4m3fn; scale: contiguous f32 with `rows` elements. Asynchronous on
// `stream` (default: stream 0); errors as in add.h.
#pragma once

#include <cuda_runtime_api.h>

#include "opreg/core/tensor.h"

namespace opreg {
namespace kernels {
namespace cuda {

void PerTokenQuantOut(const Tensor& x, const Tensor& q, const Tensor& scale,
                      cudaStream_t stream = nullptr);

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
