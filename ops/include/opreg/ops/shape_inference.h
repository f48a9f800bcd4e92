// Shape functions of opreg's built-in ops, as plain functions: they validate the arguments
// (dtype, rank, shapes, devices agreeing with each other; through checks.h, so errors read
// "[opreg::rms_norm] argument 'weight' (#1): expected dtype bf16, got f32") and return the
// sizes and dtypes of the outputs. The Meta kernels (ops/src/register_meta.cc) and the `.out` kernel
// registrations of every backend call them, so validation is written once. A functional call
// runs it once too: the Check*Out functions skip what the functional op's meta function checked
// when out resolution calls the `.out` kernel for it (opreg/dispatch/checked_once.h).
//
// `op` is the name used in messages ("opreg::rms_norm" or "opreg::rms_norm.out"); argument
// indices are those of the functional schema, which the `.out` schemas share for inputs.
//
// They never touch data, so they accept tensors on any device, meta included.
//
// Canonical C++ kernel signatures (CUDA `.out` kernels must use exactly these, as the typed
// handles in ops.h do):
//   add.out:            Tensor&(const Tensor&, const Tensor&, const Scalar&, Tensor&)
//   mul.out:            Tensor&(const Tensor&, const Tensor&, Tensor&)
//   split_add.out:      std::tuple<Tensor&, Tensor&>(const Tensor&, const Tensor&, Tensor&, Tensor&)
//   rms_norm.out:       Tensor&(const Tensor&, const Tensor&, double, Tensor&)
//   fused_add_rms_norm_: void(Tensor&, Tensor&, const Tensor&, double)
//   silu_and_mul.out:   Tensor&(const Tensor&, Tensor&)
//   per_token_quant.out: std::tuple<Tensor&, Tensor&>(const Tensor&, DType, Tensor&, Tensor&)
//   topk.out:           std::tuple<Tensor&, Tensor&>(const Tensor&, int64_t, int64_t, bool,
//                                                     Tensor&, Tensor&)
//   softmax.out:        Tensor&(const Tensor&, int64_t, Tensor&)
//   linear.out:         Tensor&(const Tensor&, const Tensor&, const std::optional<Tensor>&,
//                               Tensor&)
// Functional forms (Meta kernels only) take the same inputs and return Tensor /
// std::tuple<Tensor, Tensor>.
//
// Thread safety: all functions are pure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "opreg/core/dtype.h"
#include "opreg/core/scalar.h"
#include "opreg/core/tensor.h"

namespace opreg::ops {

// The size and dtype of one output.
struct TensorMeta {
  DimVector sizes;
  DType dtype = DType::kFloat32;
};

// A new contiguous tensor for `meta` on `device` (on the meta device: no memory).
Tensor EmptyFor(const TensorMeta& meta, Device device);

// add(self, other, alpha): self and other floating with one dtype, broadcastable; the output
// has the broadcast shape and self's dtype. alpha must be a real number (not complex/bool).
TensorMeta InferAdd(std::string_view op, const Tensor& self, const Tensor& other,
                    const Scalar& alpha);
// mul(self, other): as add.
TensorMeta InferMul(std::string_view op, const Tensor& self, const Tensor& other);
// split_add(x, y): x and y floating, one dtype, the same shape; two outputs shaped like x.
std::array<TensorMeta, 2> InferSplitAdd(std::string_view op, const Tensor& x, const Tensor& y);
// rms_norm(input, weight, eps): input floating with >= 1 dims, weight of input's dtype and shape
// [input.size(-1)], eps >= 0 and finite; the output is shaped like input.
TensorMeta InferRmsNorm(std::string_view op, const Tensor& input, const Tensor& weight,
                        double eps);
// fused_add_rms_norm_(input, residual, weight, eps): as rms_norm, and residual of input's dtype
// and shape; input and residual must not overlap, weight may overlap neither.
void CheckFusedAddRmsNorm(std::string_view op, const Tensor& input, const Tensor& residual,
                          const Tensor& weight, double eps);
// silu_and_mul(x): x floating with >= 1 dims and an even last dim 2d; output [..., d].
TensorMeta InferSiluAndMul(std::string_view op, const Tensor& x);
// per_token_quant(x, dtype): x floating with >= 1 dims; dtype i8 or f8e4m3fn. Outputs: q shaped
// like x with `dtype`, scale f32 [rows, 1] where rows = x.numel() / x.size(-1).
std::array<TensorMeta, 2> InferPerTokenQuant(std::string_view op, const Tensor& x, DType dtype);
// topk(x, k, dim, largest): x floating with >= 1 dims, dim valid, 0 <= k <= x.size(dim).
// Outputs: values (x's dtype) and indices (i64), both x's shape with size k at dim.
std::array<TensorMeta, 2> InferTopk(std::string_view op, const Tensor& x, int64_t k, int64_t dim,
                                    bool largest);
// softmax(x, dim): x floating with >= 1 dims, dim valid; output shaped like x.
TensorMeta InferSoftmax(std::string_view op, const Tensor& x, int64_t dim);
// linear(x, weight, bias): x floating with >= 1 dims [..., K]; weight [N, K] of x's dtype; bias
// (optional) [N] of x's dtype. Output [..., N].
TensorMeta InferLinear(std::string_view op, const Tensor& x, const Tensor& weight,
                       const std::optional<Tensor>& bias);

// ---- `.out` call validation ----
// Each validates an `.out` call completely: the inputs as the Infer function above does (with
// `op`, e.g. "opreg::add.out", in messages), every input tensor on `device`, every out with
// CheckOut (exact shape and dtype, on `device`, contiguous) and that no out overlaps an input
// or an earlier out (CheckNoAlias). Out indices are those of the `.out` schemas. Backends call
// them first in their `.out` kernels (the CPU registrations and the Meta kernels of the `.out`
// ops do).
void CheckAddOut(std::string_view op, const Tensor& self, const Tensor& other,
                 const Scalar& alpha, const Tensor& out, Device device);
void CheckMulOut(std::string_view op, const Tensor& self, const Tensor& other, const Tensor& out,
                 Device device);
void CheckSplitAddOut(std::string_view op, const Tensor& x, const Tensor& y, const Tensor& out0,
                      const Tensor& out1, Device device);
void CheckRmsNormOut(std::string_view op, const Tensor& input, const Tensor& weight, double eps,
                     const Tensor& out, Device device);
void CheckSiluAndMulOut(std::string_view op, const Tensor& x, const Tensor& out, Device device);
void CheckPerTokenQuantOut(std::string_view op, const Tensor& x, DType dtype, const Tensor& q,
                           const Tensor& scale, Device device);
void CheckTopkOut(std::string_view op, const Tensor& x, int64_t k, int64_t dim, bool largest,
                  const Tensor& values, const Tensor& indices, Device device);
void CheckSoftmaxOut(std::string_view op, const Tensor& x, int64_t dim, const Tensor& out,
                     Device device);
void CheckLinearOut(std::string_view op, const Tensor& x, const Tensor& weight,
                    const std::optional<Tensor>& bias, const Tensor& out, Device device);
// fused_add_rms_norm_ on `device`: CheckFusedAddRmsNorm, input on `device`, and input and
// residual contiguous (an in-place kernel would otherwise need a copy back; it is refused).
void CheckFusedAddRmsNormOn(std::string_view op, const Tensor& input, const Tensor& residual,
                            const Tensor& weight, double eps, Device device);

}  // namespace opreg::ops
