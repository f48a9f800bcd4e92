// bench_kernels' decode-size comparison with libtorch's CPU ops (built only with
// OPREG_BENCH_TORCH): what a torch user would call for each built-in opreg op, on the same
// shapes, with preallocated outputs where torch has an out form. Ops torch has no single op for
// are its usual composites (vLLM's torch-native references): split_add = add + sub,
// fused_add_rms_norm_ = add_ + rms_norm + copy_, silu_and_mul = silu * mul,
// per_token_quant = abs/amax/div/round/clamp/to.
//
// Registers itself with bench_kernels through TorchDecodeHook() at load time, so bench_kernels.cc
// needs no torch headers (it stays C++17; libtorch's headers need C++20).
#include <ATen/ATen.h>

#include <functional>
#include <string>

#include "torch_decode_hook.h"

namespace {

at::ScalarType TorchDType(const std::string& dtype) {
  if (dtype == "bf16") return at::kBFloat16;
  if (dtype == "f16") return at::kHalf;
  return at::kFloat;
}

// A closure calling torch's equivalent of `op` on rows x hidden inputs; empty for other ops.
std::function<void()> TorchCall(const std::string& op, const std::string& dtype, int64_t rows,
                                int64_t hidden) {
  const auto opts = at::TensorOptions().dtype(TorchDType(dtype));
  const at::Tensor x = at::randn({rows, hidden}, opts);
  const at::Tensor y = at::randn({rows, hidden}, opts);
  const at::Tensor w = at::rand({hidden}, opts) + 0.5;
  at::Tensor out = at::empty({rows, hidden}, opts);
  at::Tensor out2 = at::empty({rows, hidden}, opts);
  const double eps = 1e-6;
  if (op == "add") return [=]() mutable { at::add_out(out, x, y); };
  if (op == "mul") return [=]() mutable { at::mul_out(out, x, y); };
  if (op == "split_add") {
    return [=]() mutable {
      at::add_out(out, x, y);
      at::sub_out(out2, x, y);
    };
  }
  if (op == "rms_norm") return [=] { (void)at::rms_norm(x, {hidden}, w, eps); };
  if (op == "fused_add_rms_norm_") {
    at::Tensor in = x.clone(), residual = y.clone();
    return [=]() mutable {
      residual.add_(in);
      in.copy_(at::rms_norm(residual, {hidden}, w, eps));
    };
  }
  if (op == "silu_and_mul") {
    const at::Tensor gate_up = at::randn({rows, 2 * hidden}, opts);
    return [=]() mutable {
      at::mul_out(out, at::silu(gate_up.slice(-1, 0, hidden)), gate_up.slice(-1, hidden));
    };
  }
  if (op == "per_token_quant") {
    return [=] {
      const at::Tensor scale = x.abs().amax(-1, /*keepdim=*/true).div(127.0);
      (void)at::clamp(at::round(x / scale), -128, 127).to(at::kChar);
    };
  }
  if (op == "softmax") return [=]() mutable { at::softmax_out(out, x, -1); };
  if (op == "linear") {
    const at::Tensor weight = at::randn({hidden, hidden}, opts);
    return [=]() mutable { at::mm_out(out, x, weight.t()); };
  }
  return {};
}

const bool kRegistered = [] {
  bench_kernels::TorchDecodeHook() = {&TorchCall, OPREG_BENCH_TORCH_VERSION};
  return true;
}();

}  // namespace
