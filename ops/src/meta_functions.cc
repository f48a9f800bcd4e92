#include "opreg/ops/meta_functions.h"

#include <cmath>

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

TensorMeta Same(const Tensor& t) { return {DimVector(t.sizes().begin(), t.sizes().end()), t.dtype()}; }

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
  OPREG_CHECK_TYPE(alpha.isIntegral() || alpha.isFloatingPoint(),
                   ArgErrorMessage(op, "alpha", 2, "an int or float",
                                   alpha.isBoolean() ? "bool" : "complex"));
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
  const int64_t h = x.size(-1);
  const int64_t rows = h == 0 ? 0 : x.numel() / h;
  TensorMeta q = Same(x);
  q.dtype = dtype;
  int64_t r = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) r *= x.size(d);
  (void)rows;
  return {q, TensorMeta{DimVector{r, 1}, DType::kFloat32}};
}

std::array<TensorMeta, 2> InferTopk(std::string_view op, const Tensor& x, int64_t k, int64_t dim,
                                    bool largest) {
  CheckFloating(op, "x", 0, x);
  CheckMinDim(op, "x", 0, x, 1);
  const int64_t d = WrapDim(op, "dim", 2, dim, x.dim());
  const int64_t n = x.size(d);
  OPREG_CHECK_VALUE(k >= 0 && k <= n, ArgErrorMessage(op, "k", 1,
                                                      StrCat("a value in [0, ", n, "]"),
                                                      StrCat(k)));
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
  OPREG_CHECK_VALUE(weight.dim() == 2 && weight.size(1) == k,
                    ArgErrorMessage(op, "weight", 1, StrCat("shape [N, ", k, "]"),
                                    ShapeString(weight.sizes())));
  const int64_t n = weight.size(0);
  if (bias && bias->defined()) {
    CheckLike(op, {"bias", 2, &*bias}, nx);
    CheckShape(op, "bias", 2, *bias, {n});
  }
  TensorMeta m = Same(x);
  m.sizes.back() = n;
  return m;
}

}  // namespace opreg::ops
