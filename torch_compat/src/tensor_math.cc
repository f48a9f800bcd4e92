// The compute methods of at::Tensor that kernel code calls on small tensors (fills, copies,
// conversions, whole-tensor reductions, scalar arithmetic). They run on the host in double
// (int64 for integral sums): CUDA tensors are staged through host memory. Kernels do the
// heavy work; these keep libtorch-style glue code compiling and correct.
#include <algorithm>
#include <cmath>
#include <limits>

#include "host_staging.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/torch_compat/tensor.h"
#include "wrap_dim.h"

namespace at {
namespace {

using detail::OnHost;
using detail::StageCopy;
using ::opreg::DType;

// t's values as a contiguous CPU float64 tensor.
::opreg::Tensor AsDoubles(const ::opreg::Tensor& t) {
  ::opreg::Tensor out = ::opreg::empty(t.sizes(), DType::kFloat64);
  StageCopy(out, t);
  return out;
}

template <class Fn>
void MapInPlace(const ::opreg::Tensor& t, Fn fn) {
  if (t.is_meta()) return;
  ::opreg::Tensor values = AsDoubles(t);
  double* p = values.data_ptr<double>();
  for (int64_t i = 0; i < values.numel(); ++i) p[i] = fn(p[i]);
  StageCopy(t, values);
}

// A 0-dim tensor of `dtype` on t's device holding `value`.
Tensor ScalarResult(const Tensor& like, ScalarType dtype, double value) {
  Tensor out = empty({}, like.options().dtype(dtype));
  if (!out.is_meta()) StageCopy(out.opreg(), ::opreg::full({}, value, DType::kFloat64));
  return out;
}

bool IsIntegralResult(ScalarType t) { return isIntegralType(t, /*include_bool=*/true); }

// amax / amin over every element; NaN propagates.
Tensor Extreme(const Tensor& t, bool largest, const char* name) {
  TORCH_CHECK(t.numel() > 0, name,
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  ::opreg::Tensor v = AsDoubles(t.opreg());
  double m =
      largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < v.numel(); ++i) {
    const double x = v.data_ptr<double>()[i];
    if (std::isnan(x)) return ScalarResult(t, t.scalar_type(), x);
    m = largest ? std::fmax(m, x) : std::fmin(m, x);
  }
  return ScalarResult(t, t.scalar_type(), m);
}

// argmax / argmin along `dim` (all elements when none): the first extreme, NaN first of all.
Tensor ArgExtreme(const Tensor& t, std::optional<int64_t> dim, bool keepdim, bool largest,
                  const char* name) {
  const int64_t n = t.dim();
  const bool all = !dim.has_value();  // every element, flattened
  const int64_t d = all ? -1 : detail::WrapDim(*dim, n, name);
  const int64_t len = !all && n > 0 ? t.size(d) : t.numel();
  TORCH_CHECK_INDEX(len > 0, name, "(): Expected reduction dim ", all ? 0 : d,
                    " to have non-zero size.");
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < n; ++i) {
    const bool reduced = all || d == i;
    if (!reduced) shape.push_back(t.size(i));
    if (reduced && keepdim) shape.push_back(1);
  }
  Tensor out = empty(shape, t.options().dtype(ScalarType::Long));
  if (out.is_meta()) return out;
  int64_t inner = 1;
  for (int64_t i = all ? n : d + 1; i < n; ++i) inner *= t.size(i);
  const int64_t outer = t.numel() / (len * inner);
  ::opreg::Tensor v = AsDoubles(t.opreg().contiguous());
  const double* p = v.data_ptr<double>();
  ::opreg::Tensor result = ::opreg::empty(out.sizes(), DType::kInt64);
  int64_t* r = result.data_ptr<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double* row = p + o * len * inner + i;
      int64_t best = 0;
      for (int64_t j = 1; j < len && !std::isnan(row[best * inner]); ++j) {
        const double x = row[j * inner];
        if (std::isnan(x) || (largest ? x > row[best * inner] : x < row[best * inner])) best = j;
      }
      r[o * inner + i] = best;
    }
  }
  StageCopy(out.opreg(), result);
  return out;
}

}  // namespace

double Tensor::ItemAsDouble() const {
  TORCH_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  return AsDoubles(t_).data_ptr<double>()[0];
}

int64_t Tensor::ItemAsInt64() const {
  TORCH_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  ::opreg::Tensor v = ::opreg::empty(sizes(), DType::kInt64);
  StageCopy(v, t_);
  return v.data_ptr<int64_t>()[0];
}

Scalar Tensor::item() const {
  if (scalar_type() == ScalarType::Bool) return Scalar(ItemAsInt64() != 0);
  if (IsIntegralResult(scalar_type())) return Scalar(ItemAsInt64());
  return Scalar(ItemAsDouble());
}

const Tensor& Tensor::copy_(const Tensor& src, bool /*non_blocking*/) const {
  TORCH_CHECK(defined() && src.defined(), "copy_(): both tensors must be defined");
  if (src.sizes() == sizes()) {
    StageCopy(t_, src.opreg());
  } else {
    StageCopy(t_, src.expand(sizes()).opreg());
  }
  return *this;
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  if (is_meta() || numel() == 0) return *this;
  if (value.isFloatingPoint() || !IsIntegralResult(scalar_type())) {
    StageCopy(t_, ::opreg::full(sizes(), value.toDouble(), DType::kFloat64));
  } else {
    // Integers exactly, beyond 2^53.
    ::opreg::Tensor v = ::opreg::empty(sizes(), DType::kInt64);
    int64_t* p = v.data_ptr<int64_t>();
    const int64_t x = value.toInt();
    for (int64_t i = 0; i < v.numel(); ++i) p[i] = x;
    StageCopy(t_, v);
  }
  return *this;
}

const Tensor& Tensor::mul_(const Scalar& value) const {
  const double v = value.toDouble();
  MapInPlace(t_, [v](double x) { return x * v; });
  return *this;
}
const Tensor& Tensor::add_(const Scalar& value) const {
  const double v = value.toDouble();
  MapInPlace(t_, [v](double x) { return x + v; });
  return *this;
}
const Tensor& Tensor::div_(const Scalar& value) const {
  const double v = value.toDouble();
  MapInPlace(t_, [v](double x) { return x / v; });
  return *this;
}
const Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) const {
  TORCH_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  const double lo = min ? min->toDouble() : -std::numeric_limits<double>::infinity();
  const double hi = max ? max->toDouble() : std::numeric_limits<double>::infinity();
  MapInPlace(t_,
             [lo, hi](double x) { return std::isnan(x) ? x : std::fmin(std::fmax(x, lo), hi); });
  return *this;
}

Tensor Tensor::mul(const Scalar& value) const { return clone().mul_(value); }
Tensor Tensor::add(const Scalar& value) const { return clone().add_(value); }
Tensor Tensor::div(const Scalar& value) const { return clone().div_(value); }
Tensor Tensor::abs() const {
  Tensor out = clone();
  MapInPlace(out.opreg(), [](double x) { return std::fabs(x); });
  return out;
}
Tensor Tensor::neg() const {
  Tensor out = clone();
  MapInPlace(out.opreg(), [](double x) { return -x; });
  return out;
}

Tensor Tensor::sum(std::optional<ScalarType> dtype) const {
  return sum(IntArrayRef(), /*keepdim=*/false, dtype);  // no dims: every dim, as in libtorch
}

Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  const ScalarType out_type =
      dtype.value_or(IsIntegralResult(scalar_type()) ? ScalarType::Long : scalar_type());
  const int64_t n = this->dim();
  std::vector<bool> reduced(n, false);
  for (int64_t d : dim) {
    const int64_t w = detail::WrapDim(d, n, "sum");
    if (n == 0) continue;
    TORCH_CHECK(!reduced[w], "sum(): dim ", w, " appears multiple times in the list of dims");
    reduced[w] = true;
  }
  if (dim.empty()) std::fill(reduced.begin(), reduced.end(), true);  // torch: all dims
  std::vector<int64_t> kept_shape, out_shape;
  for (int64_t d = 0; d < n; ++d) {
    kept_shape.push_back(reduced[d] ? 1 : size(d));
    if (!reduced[d]) out_shape.push_back(size(d));
  }
  Tensor out = empty(keepdim ? kept_shape : out_shape, options().dtype(out_type));
  if (is_meta()) return out;
  // Output strides over the input's dims (0 along reduced ones), for an odometer walk.
  std::vector<int64_t> out_strides(n, 0);
  for (int64_t d = n - 1, stride = 1; d >= 0; --d) {
    if (reduced[d]) continue;
    out_strides[d] = stride;
    stride *= size(d);
  }
  const bool integral = IsIntegralResult(scalar_type()) && IsIntegralResult(out_type);
  ::opreg::Tensor values = ::opreg::empty(sizes(), integral ? DType::kInt64 : DType::kFloat64);
  StageCopy(values, t_);
  ::opreg::Tensor acc = ::opreg::zeros(out.sizes(), values.dtype());
  std::vector<int64_t> index(n, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < values.numel(); ++i) {
    if (integral) {
      acc.data_ptr<int64_t>()[o] += values.data_ptr<int64_t>()[i];
    } else {
      acc.data_ptr<double>()[o] += values.data_ptr<double>()[i];
    }
    for (int64_t d = n - 1; d >= 0; --d) {  // next index, row-major
      o += out_strides[d];
      if (++index[d] < size(d)) break;
      o -= out_strides[d] * index[d];
      index[d] = 0;
    }
  }
  StageCopy(out.opreg(), acc);
  return out;
}

Tensor Tensor::mean() const {
  TORCH_CHECK(is_floating_point(),
              "mean(): could not infer output dtype. Input dtype must be "
              "either a floating point or complex dtype. Got: ",
              c10::toString(scalar_type()));
  ::opreg::Tensor v = AsDoubles(t_);
  double total = 0;
  for (int64_t i = 0; i < v.numel(); ++i) total += v.data_ptr<double>()[i];
  return ScalarResult(*this, scalar_type(),
                      numel() == 0 ? std::nan("") : total / static_cast<double>(numel()));
}

Tensor Tensor::amax() const { return Extreme(*this, /*largest=*/true, "amax"); }
Tensor Tensor::amin() const { return Extreme(*this, /*largest=*/false, "amin"); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return ArgExtreme(*this, dim, keepdim, /*largest=*/true, "argmax");
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return ArgExtreme(*this, dim, keepdim, /*largest=*/false, "argmin");
}

bool Tensor::equal(const Tensor& other) const {
  if (sizes() != other.sizes() || scalar_type() != other.scalar_type()) return false;
  ::opreg::Tensor a = AsDoubles(t_), b = AsDoubles(other.opreg());
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (!(a.data_ptr<double>()[i] == b.data_ptr<double>()[i])) return false;
  }
  return true;
}

bool Tensor::allclose(const Tensor& other, double rtol, double atol) const {
  TORCH_CHECK_VALUE(sizes() == other.sizes(), "allclose(): shapes ", sizes(), " and ",
                    other.sizes(), " differ");
  ::opreg::Tensor a = AsDoubles(t_), b = AsDoubles(other.opreg());
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data_ptr<double>()[i], y = b.data_ptr<double>()[i];
    if (x == y) continue;
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) return false;
  }
  return true;
}

Tensor& fill_(Tensor& self, const Scalar& value) {
  self.fill_(value);
  return self;
}
Tensor& zero_(Tensor& self) {
  self.zero_();
  return self;
}
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) { return self.sum(dtype); }
Tensor amax(const Tensor& self) { return self.amax(); }
Tensor abs(const Tensor& self) { return self.abs(); }
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return self.argmax(dim, keepdim);
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return self.argmin(dim, keepdim);
}
bool equal(const Tensor& a, const Tensor& b) { return a.equal(b); }
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  return a.allclose(b, rtol, atol);
}
Tensor& sum_out(Tensor& out, const Tensor& self) {
  out.copy_(self.sum(out.scalar_type()));
  return out;
}
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return self.sum(dim, keepdim, dtype);
}
Tensor& sum_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim,
                std::optional<ScalarType> dtype) {
  out.copy_(self.sum(dim, keepdim, dtype.value_or(out.scalar_type())));
  return out;
}
Tensor& amax_out(Tensor& out, const Tensor& self) {
  out.copy_(self.amax());
  return out;
}

Tensor& cat_out(Tensor& out, TensorList tensors, int64_t dim) {
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const int64_t ndim = tensors[0].dim();
  const int64_t d = dim < 0 ? dim + ndim : dim;
  TORCH_CHECK_INDEX(d >= 0 && d < ndim, "cat(): Dimension out of range (got ", dim, ")");
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    out.narrow(d, offset, t.size(d)).copy_(t);
    offset += t.size(d);
  }
  return out;
}

Tensor cat(TensorList tensors, int64_t dim) {
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor& first = tensors[0];
  const int64_t d = dim < 0 ? dim + first.dim() : dim;
  TORCH_CHECK_INDEX(d >= 0 && d < first.dim(), "cat(): Dimension out of range (got ", dim, ")");
  std::vector<int64_t> shape = first.sizes().vec();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TORCH_CHECK(t.dim() == first.dim() && t.scalar_type() == first.scalar_type(),
                "torch.cat(): tensor ", i, " has ", t.dim(), " dims and dtype ",
                c10::toString(t.scalar_type()), "; expected ", first.dim(), " and ",
                c10::toString(first.scalar_type()));
    for (int64_t k = 0; k < t.dim(); ++k) {
      TORCH_CHECK(k == d || t.size(k) == first.size(k),
                  "torch.cat(): Sizes of tensors must match "
                  "except in dimension ",
                  d, ". Expected size ", first.size(k), " but got size ", t.size(k),
                  " for tensor number ", i, " in the list.");
    }
    shape[d] += t.size(d);
  }
  Tensor out = empty(shape, first.options());
  return cat_out(out, tensors, d);
}

Tensor stack(TensorList tensors, int64_t dim) {
  std::vector<Tensor> expanded;
  for (const Tensor& t : tensors)
    expanded.push_back(t.unsqueeze(dim < 0 ? dim + t.dim() + 1 : dim));
  return cat(expanded, dim < 0 ? dim + (tensors.empty() ? 0 : tensors[0].dim()) + 1 : dim);
}

}  // namespace at
