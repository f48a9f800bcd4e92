#include "opreg/ops/shape_inference.h"

#include <cmath>

#include "checked_once_tags.h"
#include "opreg/core/error.h"
#include "opreg/core/string_util.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/ops/checks.h"

namespace opreg::ops {
namespace {

// `t` is defined, on the device of `first`, and of its dtype.
void CheckLike(std::string_view op, const NamedTensor& t, const NamedTensor& first) {
  CheckDefined(op, t.name, t.index, *t.tensor);
  CheckDevice(op, t.name, t.index, *t.tensor, first.tensor->device());
  CheckDType(op, t.name, t.index, *t.tensor, first.tensor->dtype());
}

void CheckEps(std::string_view op, int index, double eps) {
  OPREG_CHECK_VALUE(std::isfinite(eps) && eps >= 0,
                    ArgErrorMessage(op, "eps", index, "a finite value >= 0", StrCat(eps)));
}

TensorMeta Same(const Tensor& t) {
  return {DimVector(t.sizes().begin(), t.sizes().end()), t.dtype()};
}

TensorMeta InferBinary(std::string_view op, const Tensor& self, const Tensor& other,
                       std::string_view a, std::string_view b) {
  const NamedTensor s{a, 0, &self}, o{b, 1, &other};
  CheckFloating(op, a, 0, self);
  CheckLike(op, o, s);
  return {BroadcastShapes(op, s, o), self.dtype()};
}

}  // namespace

Tensor EmptyFor(const TensorMeta& meta, Device device) {
  return empty(meta.sizes, meta.dtype, device);
}

TensorMeta InferAdd(std::string_view op, const Tensor& self, const Tensor& other,
                    const Scalar& alpha) {
  OPREG_CHECK_TYPE(
      alpha.isIntegral() || alpha.isFloatingPoint(),
      ArgErrorMessage(op, "alpha", 2, "an int or float", alpha.isBoolean() ? "bool" : "complex"));
  return InferBinary(op, self, other, "self", "other");
}

TensorMeta InferMul(std::string_view op, const Tensor& self, const Tensor& other) {
  return InferBinary(op, self, other, "self", "other");
}

std::array<TensorMeta, 2> InferSplitAdd(std::string_view op, const Tensor& x, const Tensor& y) {
  const NamedTensor nx{"x", 0, &x}, ny{"y", 1, &y};
  CheckFloating(op, "x", 0, x);
  CheckLike(op, ny, nx);
  CheckSameShape(op, "y", 1, y, nx);
  return {Same(x), Same(x)};
}

namespace {
void CheckNormArgs(std::string_view op, const Tensor& input, const Tensor& weight, int w_index,
                   double eps, int eps_index) {
  CheckFloating(op, "input", 0, input);
  CheckMinDim(op, "input", 0, input, 1);
  CheckLike(op, {"weight", w_index, &weight}, {"input", 0, &input});
  CheckShape(op, "weight", w_index, weight, {input.size(-1)});
  CheckEps(op, eps_index, eps);
}
}  // namespace

TensorMeta InferRmsNorm(std::string_view op, const Tensor& input, const Tensor& weight,
                        double eps) {
  CheckNormArgs(op, input, weight, 1, eps, 2);
  return Same(input);
}

void CheckFusedAddRmsNorm(std::string_view op, const Tensor& input, const Tensor& residual,
                          const Tensor& weight, double eps) {
  const NamedTensor ni{"input", 0, &input}, nr{"residual", 1, &residual};
  CheckNormArgs(op, input, weight, 2, eps, 3);
  CheckLike(op, nr, ni);
  CheckSameShape(op, "residual", 1, residual, ni);
  CheckNoAlias(op, "residual", 1, residual, {ni});
  CheckNoAlias(op, "input", 0, input, {{"weight", 2, &weight}});
  CheckNoAlias(op, "residual", 1, residual, {{"weight", 2, &weight}});
}

TensorMeta InferSiluAndMul(std::string_view op, const Tensor& x) {
  CheckFloating(op, "x", 0, x);
  CheckMinDim(op, "x", 0, x, 1);
  const int64_t n = x.size(-1);
  OPREG_CHECK_VALUE(n % 2 == 0, ArgErrorMessage(op, "x", 0, "an even last dimension",
                                                StrCat("shape ", ShapeString(x.sizes()))));
  TensorMeta m = Same(x);
  m.sizes.back() = n / 2;
  return m;
}

std::array<TensorMeta, 2> InferPerTokenQuant(std::string_view op, const Tensor& x, DType dtype) {
  CheckFloating(op, "x", 0, x);
  CheckMinDim(op, "x", 0, x, 1);
  OPREG_CHECK_TYPE(dtype == DType::kInt8 || dtype == DType::kFloat8E4M3FN,
                   ArgErrorMessage(op, "dtype", 1, "i8 or f8e4m3fn", DTypeName(dtype)));
  TensorMeta q = Same(x);
  q.dtype = dtype;
  int64_t r = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) r *= x.size(d);
  return {q, TensorMeta{DimVector{r, 1}, DType::kFloat32}};
}

std::array<TensorMeta, 2> InferTopk(std::string_view op, const Tensor& x, int64_t k, int64_t dim,
                                    bool largest) {
  CheckFloating(op, "x", 0, x);
  CheckMinDim(op, "x", 0, x, 1);
  const int64_t d = WrapDim(op, "dim", 2, dim, x.dim());
  const int64_t n = x.size(d);
  OPREG_CHECK_VALUE(k >= 0 && k <= n,
                    ArgErrorMessage(op, "k", 1, StrCat("a value in [0, ", n, "]"), StrCat(k)));
  TensorMeta v = Same(x);
  v.sizes[d] = k;
  TensorMeta i = v;
  i.dtype = DType::kInt64;
  return {v, i};
}

TensorMeta InferSoftmax(std::string_view op, const Tensor& x, int64_t dim) {
  CheckFloating(op, "x", 0, x);
  CheckMinDim(op, "x", 0, x, 1);
  WrapDim(op, "dim", 1, dim, x.dim());
  return Same(x);
}

TensorMeta InferLinear(std::string_view op, const Tensor& x, const Tensor& weight,
                       const std::optional<Tensor>& bias) {
  const NamedTensor nx{"x", 0, &x};
  CheckFloating(op, "x", 0, x);
  CheckMinDim(op, "x", 0, x, 1);
  CheckLike(op, {"weight", 1, &weight}, nx);
  const int64_t k = x.size(-1);
  OPREG_CHECK_VALUE(
      weight.dim() == 2 && weight.size(1) == k,
      ArgErrorMessage(op, "weight", 1, StrCat("shape [N, ", k, "]"), ShapeString(weight.sizes())));
  const int64_t n = weight.size(0);
  if (bias && bias->defined()) {
    CheckLike(op, {"bias", 2, &*bias}, nx);
    CheckShape(op, "bias", 2, *bias, {n});
  }
  TensorMeta m = Same(x);
  m.sizes.back() = n;
  return m;
}

// ---- `.out` validation ----
using internal::CheckedByMeta;
using internal::CheckedOp;
using internal::KindOf;
using internal::WordOf;

// Each checks the inputs' devices (which a meta function, run on meta copies, cannot see), then
// the rest; the rest is skipped when out resolution runs the `.out` kernel for a functional call
// whose meta function, the built-in one, has just checked the same tensors and values and sized
// the fresh outs (checked_once.h), so that a functional call's arguments are checked once.

namespace {
void CheckOn(std::string_view op, std::initializer_list<NamedTensor> args, Device device) {
  for (const NamedTensor& a : args) {
    if (a.tensor->defined()) CheckDevice(op, a.name, a.index, *a.tensor, device);
  }
}
}  // namespace

void CheckAddOut(std::string_view op, const Tensor& self, const Tensor& other, const Scalar& alpha,
                 const Tensor& out, Device device) {
  const NamedTensor s{"self", 0, &self}, o{"other", 1, &other};
  CheckOn(op, {s, o}, device);
  if (CheckedByMeta(CheckedOp::kAdd, {&self, &other, &out}, {KindOf(alpha), WordOf(alpha)})) return;
  const TensorMeta m = InferAdd(op, self, other, alpha);
  CheckOut(op, "out", 3, out, m.sizes, m.dtype, device);
  CheckNoAlias(op, "out", 3, out, {s, o});
}

void CheckMulOut(std::string_view op, const Tensor& self, const Tensor& other, const Tensor& out,
                 Device device) {
  const NamedTensor s{"self", 0, &self}, o{"other", 1, &other};
  CheckOn(op, {s, o}, device);
  if (CheckedByMeta(CheckedOp::kMul, {&self, &other, &out})) return;
  const TensorMeta m = InferMul(op, self, other);
  CheckOut(op, "out", 2, out, m.sizes, m.dtype, device);
  CheckNoAlias(op, "out", 2, out, {s, o});
}

void CheckSplitAddOut(std::string_view op, const Tensor& x, const Tensor& y, const Tensor& out0,
                      const Tensor& out1, Device device) {
  const NamedTensor nx{"x", 0, &x}, ny{"y", 1, &y};
  CheckOn(op, {nx, ny}, device);
  if (CheckedByMeta(CheckedOp::kSplitAdd, {&x, &y, &out0, &out1})) return;
  const auto m = InferSplitAdd(op, x, y);
  CheckOut(op, "out0", 2, out0, m[0].sizes, m[0].dtype, device);
  CheckOut(op, "out1", 3, out1, m[1].sizes, m[1].dtype, device);
  CheckNoAlias(op, "out0", 2, out0, {nx, ny});
  CheckNoAlias(op, "out1", 3, out1, {nx, ny, {"out0", 2, &out0}});
}

void CheckRmsNormOut(std::string_view op, const Tensor& input, const Tensor& weight, double eps,
                     const Tensor& out, Device device) {
  const NamedTensor ni{"input", 0, &input}, nw{"weight", 1, &weight};
  CheckOn(op, {ni, nw}, device);
  if (CheckedByMeta(CheckedOp::kRmsNorm, {&input, &weight, &out}, {WordOf(eps)})) return;
  const TensorMeta m = InferRmsNorm(op, input, weight, eps);
  CheckOut(op, "out", 3, out, m.sizes, m.dtype, device);
  CheckNoAlias(op, "out", 3, out, {ni, nw});
}

void CheckSiluAndMulOut(std::string_view op, const Tensor& x, const Tensor& out, Device device) {
  const NamedTensor nx{"x", 0, &x};
  CheckOn(op, {nx}, device);
  if (CheckedByMeta(CheckedOp::kSiluAndMul, {&x, &out})) return;
  const TensorMeta m = InferSiluAndMul(op, x);
  CheckOut(op, "out", 1, out, m.sizes, m.dtype, device);
  CheckNoAlias(op, "out", 1, out, {nx});
}

void CheckPerTokenQuantOut(std::string_view op, const Tensor& x, DType dtype, const Tensor& q,
                           const Tensor& scale, Device device) {
  const NamedTensor nx{"x", 0, &x};
  CheckOn(op, {nx}, device);
  if (CheckedByMeta(CheckedOp::kPerTokenQuant, {&x, &q, &scale}, {WordOf(dtype)})) return;
  const auto m = InferPerTokenQuant(op, x, dtype);
  CheckOut(op, "q", 2, q, m[0].sizes, m[0].dtype, device);
  CheckOut(op, "scale", 3, scale, m[1].sizes, m[1].dtype, device);
  CheckNoAlias(op, "q", 2, q, {nx});
  CheckNoAlias(op, "scale", 3, scale, {nx, {"q", 2, &q}});
}

void CheckTopkOut(std::string_view op, const Tensor& x, int64_t k, int64_t dim, bool largest,
                  const Tensor& values, const Tensor& indices, Device device) {
  const NamedTensor nx{"x", 0, &x};
  CheckOn(op, {nx}, device);
  if (CheckedByMeta(CheckedOp::kTopk, {&x, &values, &indices},
                    {WordOf(k), WordOf(dim), WordOf(largest)})) {
    return;
  }
  const auto m = InferTopk(op, x, k, dim, largest);
  CheckOut(op, "values", 4, values, m[0].sizes, m[0].dtype, device);
  CheckOut(op, "indices", 5, indices, m[1].sizes, m[1].dtype, device);
  CheckNoAlias(op, "values", 4, values, {nx});
  CheckNoAlias(op, "indices", 5, indices, {nx, {"values", 4, &values}});
}

void CheckSoftmaxOut(std::string_view op, const Tensor& x, int64_t dim, const Tensor& out,
                     Device device) {
  const NamedTensor nx{"x", 0, &x};
  CheckOn(op, {nx}, device);
  if (CheckedByMeta(CheckedOp::kSoftmax, {&x, &out}, {WordOf(dim)})) return;
  const TensorMeta m = InferSoftmax(op, x, dim);
  CheckOut(op, "out", 2, out, m.sizes, m.dtype, device);
  CheckNoAlias(op, "out", 2, out, {nx});
}

void CheckLinearOut(std::string_view op, const Tensor& x, const Tensor& weight,
                    const std::optional<Tensor>& bias, const Tensor& out, Device device) {
  const Tensor b = bias ? *bias : Tensor();
  const NamedTensor nx{"x", 0, &x}, nw{"weight", 1, &weight}, nb{"bias", 2, &b};
  CheckOn(op, {nx, nw, nb}, device);
  if (CheckedByMeta(CheckedOp::kLinear, {&x, &weight, bias ? &b : nullptr, &out})) return;
  const TensorMeta m = InferLinear(op, x, weight, bias);
  CheckOut(op, "out", 3, out, m.sizes, m.dtype, device);
  CheckNoAlias(op, "out", 3, out, {nx, nw, nb});
}

void CheckFusedAddRmsNormOn(std::string_view op, const Tensor& input, const Tensor& residual,
                            const Tensor& weight, double eps, Device device) {
  CheckOn(op, {{"input", 0, &input}}, device);
  CheckFusedAddRmsNorm(op, input, residual, weight, eps);
  CheckWrittenLayout(op, "input", 0, input, device);
  CheckWrittenLayout(op, "residual", 1, residual, device);
}

}  // namespace opreg::ops
