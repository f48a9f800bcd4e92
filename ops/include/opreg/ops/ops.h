// Typed C++ calls of opreg's built-in ops through the dispatcher (so they run the kernel for
// the arguments' device: CPU, CUDA or Meta). Each caches its TypedOperatorHandle in a
// function-local static (looked up once, thread-safe). Errors are those of the kernels:
// opreg::Error with "[opreg::op] argument 'name' (#i): expected ..., got ..." messages.
//
// The functional forms allocate their outputs; the `_out` forms write into the caller's
// tensors (exact shape, dtype and device; contiguous; not overlapping an input) and return them.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include "opreg/core/dtype.h"
#include "opreg/core/scalar.h"
#include "opreg/core/tensor.h"

namespace opreg::ops {

// self + alpha * other, broadcasting.
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);
// self * other, broadcasting.
Tensor mul(const Tensor& self, const Tensor& other);
Tensor& mul_out(const Tensor& self, const Tensor& other, Tensor& out);
// (x + y, x - y).
std::tuple<Tensor, Tensor> split_add(const Tensor& x, const Tensor& y);
std::tuple<Tensor&, Tensor&> split_add_out(const Tensor& x, const Tensor& y, Tensor& out0,
                                           Tensor& out1);
// input / sqrt(mean(input^2, -1) + eps) * weight.
Tensor rms_norm(const Tensor& input, const Tensor& weight, double eps = 1e-6);
Tensor& rms_norm_out(const Tensor& input, const Tensor& weight, double eps, Tensor& out);
// residual += input; input = rms_norm(residual, weight, eps) (vLLM), in place.
void fused_add_rms_norm_(Tensor& input, Tensor& residual, const Tensor& weight, double eps = 1e-6);
// silu(x[..., :d]) * x[..., d:].
Tensor silu_and_mul(const Tensor& x);
Tensor& silu_and_mul_out(const Tensor& x, Tensor& out);
// (q, scale): per-row absmax quantization to i8 or f8e4m3fn, f32 scales [rows, 1].
std::tuple<Tensor, Tensor> per_token_quant(const Tensor& x, DType dtype);
std::tuple<Tensor&, Tensor&> per_token_quant_out(const Tensor& x, DType dtype, Tensor& q,
                                                 Tensor& scale);
// (values, indices i64) of the k largest (or smallest) along dim, sorted.
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true);
std::tuple<Tensor&, Tensor&> topk_out(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                      Tensor& values, Tensor& indices);
// Numerically stable softmax along dim.
Tensor softmax(const Tensor& x, int64_t dim = -1);
Tensor& softmax_out(const Tensor& x, int64_t dim, Tensor& out);
// x @ weight^T + bias.
Tensor linear(const Tensor& x, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt);
Tensor& linear_out(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                   Tensor& out);

}  // namespace opreg::ops
