// CPU kernels (f32, contiguous) and Meta (shape-only) kernels of the mykernels ops.
#include <cstdint>
#include <limits>
#include <tuple>

#include "opreg/core/error.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::Tensor;

void CheckF32Contiguous(const Tensor& x, const char* op, const char* arg) {
  OPREG_CHECK_TYPE(x.dtype() == opreg::DType::kFloat32, "[mykernels::", op, "] argument '", arg,
                   "': expected dtype f32, got ", opreg::DTypeName(x.dtype()));
  OPREG_CHECK_VALUE(x.is_contiguous(), "[mykernels::", op, "] argument '", arg,
                    "': expected a contiguous tensor");
}

// Tensor is a handle: writing through a const Tensor& changes the elements, not the handle.
void ScaleInto(const Tensor& x, double alpha, const Tensor& out) {
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const float a = static_cast<float>(alpha);
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * a;
}

Tensor ScaleOutCpu(const Tensor& x, double alpha, const Tensor& out) {
  CheckF32Contiguous(x, "scale.out", "x");
  CheckF32Contiguous(out, "scale.out", "out");
  OPREG_CHECK_VALUE(out.sizes() == x.sizes(), "[mykernels::scale.out] argument 'out': expected ",
                    "the shape of 'x'");
  ScaleInto(x, alpha, out);
  return out;
}

Tensor ScaleCpu(const Tensor& x, double alpha) {
  CheckF32Contiguous(x, "scale", "x");
  Tensor out = opreg::empty_like(x);
  ScaleInto(x, alpha, out);
  return out;
}

int64_t CountPositiveCpu(const Tensor& x) {
  CheckF32Contiguous(x, "count_positive", "x");
  const float* in = x.data_ptr<float>();
  int64_t n = 0;
  for (int64_t i = 0; i < x.numel(); ++i) n += in[i] > 0.0f;
  return n;
}

// Both results are 0-dim tensors.
std::tuple<Tensor, Tensor> MinMaxCpu(const Tensor& x) {
  CheckF32Contiguous(x, "minmax", "x");
  OPREG_CHECK_VALUE(x.numel() > 0, "[mykernels::minmax] argument 'x': expected a non-empty tensor");
  const float* in = x.data_ptr<float>();
  float lo = std::numeric_limits<float>::infinity();
  float hi = -lo;
  for (int64_t i = 0; i < x.numel(); ++i) {
    lo = in[i] < lo ? in[i] : lo;
    hi = in[i] > hi ? in[i] : hi;
  }
  return {opreg::full({}, lo, x.dtype()), opreg::full({}, hi, x.dtype())};
}

// Meta kernels: the outputs' shapes and dtypes, no data (used for shape inference and planning).
Tensor ScaleMeta(const Tensor& x, double alpha) { return opreg::empty_like(x); }
Tensor ScaleOutMeta(const Tensor& x, double alpha, const Tensor& out) { return out; }
std::tuple<Tensor, Tensor> MinMaxMeta(const Tensor& x) {
  return {opreg::empty({}, x.dtype(), x.device()), opreg::empty({}, x.dtype(), x.device())};
}

}  // namespace

OPREG_LIBRARY_IMPL(mykernels, CPU, m) {
  m.impl("scale", &ScaleCpu);
  m.impl("scale.out", &ScaleOutCpu);
  m.impl("count_positive", &CountPositiveCpu);
  m.impl("minmax", &MinMaxCpu);
}

OPREG_LIBRARY_IMPL(mykernels, Meta, m) {
  m.impl("scale", &ScaleMeta);
  m.impl("scale.out", &ScaleOutMeta);
  m.impl("minmax", &MinMaxMeta);
}
