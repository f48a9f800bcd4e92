// The schemas of opreg's built-in ops (namespace opreg). Functional ops resolve to their `.out`
// variants (linked by PyTorch's naming rule): a backend registers only the `.out` kernels (and
// the in-place fused_add_rms_norm_); ops/src/register_meta.cc gives every functional op its meta function.
#include "opreg/dispatch/library.h"

OPREG_LIBRARY(opreg, m) {
  m.def("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("mul(Tensor self, Tensor other) -> Tensor");
  m.def("mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("split_add(Tensor x, Tensor y) -> (Tensor, Tensor)");
  m.def(
      "split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0, Tensor(b!) out1) -> "
      "(Tensor(a!), Tensor(b!))");
  m.def("rms_norm(Tensor input, Tensor weight, float eps=1e-06) -> Tensor");
  m.def(
      "rms_norm.out(Tensor input, Tensor weight, float eps=1e-06, *, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def(
      "fused_add_rms_norm_(Tensor(a!) input, Tensor(b!) residual, Tensor weight, "
      "float eps=1e-06) -> ()");
  m.def("silu_and_mul(Tensor x) -> Tensor");
  m.def("silu_and_mul.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("per_token_quant(Tensor x, ScalarType dtype) -> (Tensor q, Tensor scale)");
  m.def(
      "per_token_quant.out(Tensor x, ScalarType dtype, *, Tensor(a!) q, Tensor(b!) scale) -> "
      "(Tensor(a!) q, Tensor(b!) scale)");
  m.def("topk(Tensor x, int k, int dim=-1, bool largest=True) -> (Tensor values, Tensor indices)");
  m.def(
      "topk.out(Tensor x, int k, int dim=-1, bool largest=True, *, Tensor(a!) values, "
      "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)");
  m.def("softmax(Tensor x, int dim=-1) -> Tensor");
  m.def("softmax.out(Tensor x, int dim=-1, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("linear(Tensor x, Tensor weight, Tensor? bias=None) -> Tensor");
  m.def("linear.out(Tensor x, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)");
}
