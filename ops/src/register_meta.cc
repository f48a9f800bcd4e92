// Meta kernels (shape functions) of opreg's built-in ops: validate the arguments (through
// shape_inference.h) and return meta-device outputs; those of the `.out` ops validate and
// return the outs. A call that mixes meta and other tensors
// dispatches here too; the validation then reports the device mismatch.
#include <optional>
#include <tuple>

#include "checked_once_tags.h"
#include "opreg/dispatch/library.h"
#include "opreg/ops/shape_inference.h"

namespace opreg::ops {
namespace {

using internal::CheckedOp;
using internal::KindOf;
using internal::Vouched;
using internal::WordOf;

Tensor Make(const TensorMeta& m) { return EmptyFor(m, Device::meta()); }
std::tuple<Tensor, Tensor> Make2(const std::array<TensorMeta, 2>& m) {
  return {Make(m[0]), Make(m[1])};
}

Tensor AddMeta(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return Vouched(CheckedOp::kAdd, {&self, &other}, {KindOf(alpha), WordOf(alpha)},
                 Make(InferAdd("opreg::add", self, other, alpha)));
}
Tensor MulMeta(const Tensor& self, const Tensor& other) {
  return Vouched(CheckedOp::kMul, {&self, &other}, {}, Make(InferMul("opreg::mul", self, other)));
}
std::tuple<Tensor, Tensor> SplitAddMeta(const Tensor& x, const Tensor& y) {
  return Vouched(CheckedOp::kSplitAdd, {&x, &y}, {},
                 Make2(InferSplitAdd("opreg::split_add", x, y)));
}
Tensor RmsNormMeta(const Tensor& input, const Tensor& weight, double eps) {
  return Vouched(CheckedOp::kRmsNorm, {&input, &weight}, {WordOf(eps)},
                 Make(InferRmsNorm("opreg::rms_norm", input, weight, eps)));
}
void FusedAddRmsNormMeta(Tensor& input, Tensor& residual, const Tensor& weight, double eps) {
  CheckFusedAddRmsNorm("opreg::fused_add_rms_norm_", input, residual, weight, eps);
}
Tensor SiluAndMulMeta(const Tensor& x) {
  return Vouched(CheckedOp::kSiluAndMul, {&x}, {}, Make(InferSiluAndMul("opreg::silu_and_mul", x)));
}
std::tuple<Tensor, Tensor> PerTokenQuantMeta(const Tensor& x, DType dtype) {
  return Vouched(CheckedOp::kPerTokenQuant, {&x}, {WordOf(dtype)},
                 Make2(InferPerTokenQuant("opreg::per_token_quant", x, dtype)));
}
std::tuple<Tensor, Tensor> TopkMeta(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  return Vouched(CheckedOp::kTopk, {&x}, {WordOf(k), WordOf(dim), WordOf(largest)},
                 Make2(InferTopk("opreg::topk", x, k, dim, largest)));
}
Tensor SoftmaxMeta(const Tensor& x, int64_t dim) {
  return Vouched(CheckedOp::kSoftmax, {&x}, {WordOf(dim)},
                 Make(InferSoftmax("opreg::softmax", x, dim)));
}
Tensor LinearMeta(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  return Vouched(CheckedOp::kLinear, {&x, &weight, bias ? &*bias : nullptr}, {},
                 Make(InferLinear("opreg::linear", x, weight, bias)));
}

// Meta kernels of the `.out` ops: validate (devices against the first input's) and return the
// outs, so meta-device `.out` calls work and mixed-device calls get a precise message.
Tensor& AddOutMeta(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  CheckAddOut("opreg::add.out", self, other, alpha, out, self.device());
  return out;
}
Tensor& MulOutMeta(const Tensor& self, const Tensor& other, Tensor& out) {
  CheckMulOut("opreg::mul.out", self, other, out, self.device());
  return out;
}
std::tuple<Tensor&, Tensor&> SplitAddOutMeta(const Tensor& x, const Tensor& y, Tensor& out0,
                                             Tensor& out1) {
  CheckSplitAddOut("opreg::split_add.out", x, y, out0, out1, x.device());
  return {out0, out1};
}
Tensor& RmsNormOutMeta(const Tensor& input, const Tensor& weight, double eps, Tensor& out) {
  CheckRmsNormOut("opreg::rms_norm.out", input, weight, eps, out, input.device());
  return out;
}
Tensor& SiluAndMulOutMeta(const Tensor& x, Tensor& out) {
  CheckSiluAndMulOut("opreg::silu_and_mul.out", x, out, x.device());
  return out;
}
std::tuple<Tensor&, Tensor&> PerTokenQuantOutMeta(const Tensor& x, DType dtype, Tensor& q,
                                                  Tensor& scale) {
  CheckPerTokenQuantOut("opreg::per_token_quant.out", x, dtype, q, scale, x.device());
  return {q, scale};
}
std::tuple<Tensor&, Tensor&> TopkOutMeta(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                         Tensor& values, Tensor& indices) {
  CheckTopkOut("opreg::topk.out", x, k, dim, largest, values, indices, x.device());
  return {values, indices};
}
Tensor& SoftmaxOutMeta(const Tensor& x, int64_t dim, Tensor& out) {
  CheckSoftmaxOut("opreg::softmax.out", x, dim, out, x.device());
  return out;
}
Tensor& LinearOutMeta(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                      Tensor& out) {
  CheckLinearOut("opreg::linear.out", x, weight, bias, out, x.device());
  return out;
}

}  // namespace
}  // namespace opreg::ops

OPREG_LIBRARY_IMPL(opreg, Meta, m) {
  using namespace opreg::ops;  // NOLINT
  m.impl("add", &AddMeta);
  m.impl("mul", &MulMeta);
  m.impl("split_add", &SplitAddMeta);
  m.impl("rms_norm", &RmsNormMeta);
  m.impl("fused_add_rms_norm_", &FusedAddRmsNormMeta);
  m.impl("silu_and_mul", &SiluAndMulMeta);
  m.impl("per_token_quant", &PerTokenQuantMeta);
  m.impl("topk", &TopkMeta);
  m.impl("softmax", &SoftmaxMeta);
  m.impl("linear", &LinearMeta);
  m.impl("add.out", &AddOutMeta);
  m.impl("mul.out", &MulOutMeta);
  m.impl("split_add.out", &SplitAddOutMeta);
  m.impl("rms_norm.out", &RmsNormOutMeta);
  m.impl("silu_and_mul.out", &SiluAndMulOutMeta);
  m.impl("per_token_quant.out", &PerTokenQuantOutMeta);
  m.impl("topk.out", &TopkOutMeta);
  m.impl("softmax.out", &SoftmaxOutMeta);
  m.impl("linear.out", &LinearOutMeta);
}
