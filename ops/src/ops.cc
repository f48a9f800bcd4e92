#include "opreg/ops/ops.h"

#include "opreg/dispatch/dispatcher.h"

namespace opreg::ops {
namespace {

template <class Sig>
TypedOperatorHandle<Sig> Handle(std::string_view name) {
  return Dispatcher::Get().FindOpOrThrow(name).typed<Sig>();
}

using T2 = std::tuple<Tensor, Tensor>;
using T2R = std::tuple<Tensor&, Tensor&>;

}  // namespace

#define OPREG_OPS_HANDLE_(name, ...) static const auto h = Handle<__VA_ARGS__>(name)

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  OPREG_OPS_HANDLE_("opreg::add", Tensor(const Tensor&, const Tensor&, const Scalar&));
  return h.call(self, other, alpha);
}
Tensor& add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  OPREG_OPS_HANDLE_("opreg::add.out",
                    Tensor & (const Tensor&, const Tensor&, const Scalar&, Tensor&));
  return h.call(self, other, alpha, out);
}
Tensor mul(const Tensor& self, const Tensor& other) {
  OPREG_OPS_HANDLE_("opreg::mul", Tensor(const Tensor&, const Tensor&));
  return h.call(self, other);
}
Tensor& mul_out(const Tensor& self, const Tensor& other, Tensor& out) {
  OPREG_OPS_HANDLE_("opreg::mul.out", Tensor & (const Tensor&, const Tensor&, Tensor&));
  return h.call(self, other, out);
}
std::tuple<Tensor, Tensor> split_add(const Tensor& x, const Tensor& y) {
  OPREG_OPS_HANDLE_("opreg::split_add", T2(const Tensor&, const Tensor&));
  return h.call(x, y);
}
std::tuple<Tensor&, Tensor&> split_add_out(const Tensor& x, const Tensor& y, Tensor& out0,
                                           Tensor& out1) {
  OPREG_OPS_HANDLE_("opreg::split_add.out", T2R(const Tensor&, const Tensor&, Tensor&, Tensor&));
  return h.call(x, y, out0, out1);
}
Tensor rms_norm(const Tensor& input, const Tensor& weight, double eps) {
  OPREG_OPS_HANDLE_("opreg::rms_norm", Tensor(const Tensor&, const Tensor&, double));
  return h.call(input, weight, eps);
}
Tensor& rms_norm_out(const Tensor& input, const Tensor& weight, double eps, Tensor& out) {
  OPREG_OPS_HANDLE_("opreg::rms_norm.out",
                    Tensor & (const Tensor&, const Tensor&, double, Tensor&));
  return h.call(input, weight, eps, out);
}
void fused_add_rms_norm_(Tensor& input, Tensor& residual, const Tensor& weight, double eps) {
  OPREG_OPS_HANDLE_("opreg::fused_add_rms_norm_", void(Tensor&, Tensor&, const Tensor&, double));
  h.call(input, residual, weight, eps);
}
Tensor silu_and_mul(const Tensor& x) {
  OPREG_OPS_HANDLE_("opreg::silu_and_mul", Tensor(const Tensor&));
  return h.call(x);
}
Tensor& silu_and_mul_out(const Tensor& x, Tensor& out) {
  OPREG_OPS_HANDLE_("opreg::silu_and_mul.out", Tensor & (const Tensor&, Tensor&));
  return h.call(x, out);
}
std::tuple<Tensor, Tensor> per_token_quant(const Tensor& x, DType dtype) {
  OPREG_OPS_HANDLE_("opreg::per_token_quant", T2(const Tensor&, DType));
  return h.call(x, dtype);
}
std::tuple<Tensor&, Tensor&> per_token_quant_out(const Tensor& x, DType dtype, Tensor& q,
                                                 Tensor& scale) {
  OPREG_OPS_HANDLE_("opreg::per_token_quant.out", T2R(const Tensor&, DType, Tensor&, Tensor&));
  return h.call(x, dtype, q, scale);
}
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  OPREG_OPS_HANDLE_("opreg::topk", T2(const Tensor&, int64_t, int64_t, bool));
  return h.call(x, k, dim, largest);
}
std::tuple<Tensor&, Tensor&> topk_out(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                      Tensor& values, Tensor& indices) {
  OPREG_OPS_HANDLE_("opreg::topk.out",
                    T2R(const Tensor&, int64_t, int64_t, bool, Tensor&, Tensor&));
  return h.call(x, k, dim, largest, values, indices);
}
Tensor softmax(const Tensor& x, int64_t dim) {
  OPREG_OPS_HANDLE_("opreg::softmax", Tensor(const Tensor&, int64_t));
  return h.call(x, dim);
}
Tensor& softmax_out(const Tensor& x, int64_t dim, Tensor& out) {
  OPREG_OPS_HANDLE_("opreg::softmax.out", Tensor & (const Tensor&, int64_t, Tensor&));
  return h.call(x, dim, out);
}
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  OPREG_OPS_HANDLE_("opreg::linear",
                    Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&));
  return h.call(x, weight, bias);
}
Tensor& linear_out(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                   Tensor& out) {
  OPREG_OPS_HANDLE_("opreg::linear.out",
                    Tensor & (const Tensor&, const Tensor&, const std::optional<Tensor>&, Tensor&));
  return h.call(x, weight, bias, out);
}

#undef OPREG_OPS_HANDLE_

}  // namespace opreg::ops
