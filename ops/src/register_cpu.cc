// CPU registrations of opreg's built-in ops: the `.out` kernels and fused_add_rms_norm_. The
// functional forms resolve through the `.out` variants (meta function, allocate, `.out` kernel).
//
// Each wrapper validates the call (shape_inference.h: inputs, outs, devices, aliasing) with the
// op's own name, makes strided inputs contiguous where the kernel needs it (add and mul read
// any strides), gives strided written tensors a contiguous temporary (WriteTarget), and calls
// the kernel.
#include <exception>
#include <optional>
#include <tuple>

#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"
#include "opreg/kernels/cpu/kernels.h"
#include "opreg/ops/checks.h"
#include "opreg/ops/shape_inference.h"

namespace opreg::ops {
namespace {

namespace k = ::opreg::kernels::cpu;
constexpr Device kCpu = Device::cpu();

// The kernels write contiguous memory. A strided tensor the op writes (a column view of a fused
// qkv, say) gets a contiguous temporary, copied into it after the kernel ran (as torch's
// TensorIterator does for outs it cannot write directly); with `read`, the temporary starts as
// a copy of it (an in-place argument).
class WriteTarget {
 public:
  explicit WriteTarget(Tensor& t, bool read = false)
      : t_(t),
        strided_(!t.is_contiguous()),
        tmp_(!strided_ ? t : (read ? t.contiguous() : empty_like(t))) {}
  ~WriteTarget() noexcept(false) {
    if (strided_ && std::uncaught_exceptions() == 0) t_.copy_(tmp_);
  }
  Tensor& get() { return tmp_; }

 private:
  Tensor& t_;
  bool strided_;
  Tensor tmp_;
};

Tensor& AddOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  CheckAddOut("opreg::add.out", self, other, alpha, out, kCpu);
  k::AddOut(self, other, alpha.toDouble(), WriteTarget(out).get());
  return out;
}

Tensor& MulOut(const Tensor& self, const Tensor& other, Tensor& out) {
  CheckMulOut("opreg::mul.out", self, other, out, kCpu);
  k::MulOut(self, other, WriteTarget(out).get());
  return out;
}

std::tuple<Tensor&, Tensor&> SplitAddOut(const Tensor& x, const Tensor& y, Tensor& out0,
                                         Tensor& out1) {
  CheckSplitAddOut("opreg::split_add.out", x, y, out0, out1, kCpu);
  WriteTarget o0(out0), o1(out1);
  k::SplitAddOut(x.contiguous(), y.contiguous(), o0.get(), o1.get());
  return {out0, out1};
}

Tensor& RmsNormOut(const Tensor& input, const Tensor& weight, double eps, Tensor& out) {
  CheckRmsNormOut("opreg::rms_norm.out", input, weight, eps, out, kCpu);
  k::RmsNormOut(input.contiguous(), weight.contiguous(), eps, WriteTarget(out).get());
  return out;
}

void FusedAddRmsNorm(Tensor& input, Tensor& residual, const Tensor& weight, double eps) {
  CheckFusedAddRmsNormOn("opreg::fused_add_rms_norm_", input, residual, weight, eps, kCpu);
  WriteTarget in(input, /*read=*/true), res(residual, /*read=*/true);
  k::FusedAddRmsNormInplace(in.get(), res.get(), weight.contiguous(), eps);
}

Tensor& SiluAndMulOut(const Tensor& x, Tensor& out) {
  CheckSiluAndMulOut("opreg::silu_and_mul.out", x, out, kCpu);
  k::SiluAndMulOut(x.contiguous(), WriteTarget(out).get());
  return out;
}

std::tuple<Tensor&, Tensor&> PerTokenQuantOut(const Tensor& x, DType dtype, Tensor& q,
                                              Tensor& scale) {
  CheckPerTokenQuantOut("opreg::per_token_quant.out", x, dtype, q, scale, kCpu);
  WriteTarget qt(q), st(scale);
  k::PerTokenQuantOut(x.contiguous(), qt.get(), st.get());
  return {q, scale};
}

std::tuple<Tensor&, Tensor&> TopkOut(const Tensor& x, int64_t kk, int64_t dim, bool largest,
                                     Tensor& values, Tensor& indices) {
  CheckTopkOut("opreg::topk.out", x, kk, dim, largest, values, indices, kCpu);
  WriteTarget vt(values), it(indices);
  k::TopkOut(x.contiguous(), kk, WrapDim("opreg::topk.out", "dim", 2, dim, x.dim()), largest,
             vt.get(), it.get());
  return {values, indices};
}

Tensor& SoftmaxOut(const Tensor& x, int64_t dim, Tensor& out) {
  CheckSoftmaxOut("opreg::softmax.out", x, dim, out, kCpu);
  k::SoftmaxOut(x.contiguous(), WrapDim("opreg::softmax.out", "dim", 1, dim, x.dim()),
                WriteTarget(out).get());
  return out;
}

Tensor& LinearOut(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                  Tensor& out) {
  CheckLinearOut("opreg::linear.out", x, weight, bias, out, kCpu);
  const Tensor b = bias && bias->defined() ? bias->contiguous() : Tensor();
  k::LinearOut(x.contiguous(), weight.contiguous(), b, WriteTarget(out).get());
  return out;
}

}  // namespace
}  // namespace opreg::ops

OPREG_LIBRARY_IMPL(opreg, CPU, m) {
  using namespace opreg::ops;  // NOLINT
  m.impl("add.out", &AddOut);
  m.impl("mul.out", &MulOut);
  m.impl("split_add.out", &SplitAddOut);
  m.impl("rms_norm.out", &RmsNormOut);
  m.impl("fused_add_rms_norm_", &FusedAddRmsNorm);
  m.impl("silu_and_mul.out", &SiluAndMulOut);
  m.impl("per_token_quant.out", &PerTokenQuantOut);
  m.impl("topk.out", &TopkOut);
  m.impl("softmax.out", &SoftmaxOut);
  m.impl("linear.out", &LinearOut);
}
