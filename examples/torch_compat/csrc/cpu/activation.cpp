#include <cmath>

#include <ATen/Parallel.h>
#include <torch/all.h>

#include "../dispatch_utils.h"
#include "../ops.h"

namespace {

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
inline float gelu_tanh(float x) {
  const float inner = 0.79788456080286535f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(inner));
}

// out[..., d] = act(input[..., :d]) * input[..., d:] (or the reverse for mul_and_silu).
template <typename scalar_t, typename Fn>
void gated_kernel(scalar_t* out, const scalar_t* input, int64_t rows, int64_t d, Fn fn,
                  bool act_first) {
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* x = input + r * 2 * d;
      for (int64_t i = 0; i < d; ++i) {
        const float a = static_cast<float>(x[i]);
        const float b = static_cast<float>(x[d + i]);
        out[r * d + i] = static_cast<scalar_t>(act_first ? fn(a) * b : a * fn(b));
      }
    }
  });
}

template <typename Fn>
void gated(torch::Tensor& out, torch::Tensor& input, const char* name, Fn fn,
           bool act_first = true) {
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), name,
              ": input and out must be contiguous");
  const int64_t d = input.size(-1) / 2;
  TORCH_CHECK(input.size(-1) == 2 * d, name, ": the last dimension of input must be even, got ",
              input.size(-1));
  TORCH_CHECK(out.size(-1) == d && out.numel() * 2 == input.numel(), name,
              ": out must have the shape of input with the last dimension halved, got ",
              out.sizes(), " for input ", input.sizes());
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), name, ": out has dtype ",
              out.scalar_type(), " but input has ", input.scalar_type());
  const int64_t rows = d == 0 ? 0 : input.numel() / (2 * d);
  COMPAT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "activation", [&] {
    gated_kernel<scalar_t>(out.data_ptr<scalar_t>(), input.data_ptr<scalar_t>(), rows, d, fn,
                           act_first);
  });
}

template <typename Fn>
void elementwise(torch::Tensor& out, torch::Tensor& input, const char* name, Fn fn) {
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), name,
              ": input and out must be contiguous");
  TORCH_CHECK(out.sizes() == input.sizes(), name, ": out has shape ", out.sizes(),
              " but input has ", input.sizes());
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), name, ": dtypes differ");
  COMPAT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "activation", [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    scalar_t* y = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < input.numel(); ++i) {
      y[i] = static_cast<scalar_t>(fn(static_cast<float>(x[i])));
    }
  });
}

}  // namespace

void silu_and_mul(torch::Tensor& out, torch::Tensor& input) {
  gated(out, input, "silu_and_mul", silu);
}

void mul_and_silu(torch::Tensor& out, torch::Tensor& input) {
  gated(out, input, "mul_and_silu", silu, /*act_first=*/false);
}

void gelu_and_mul(torch::Tensor& out, torch::Tensor& input) {
  gated(out, input, "gelu_and_mul", gelu_erf);
}

void gelu_tanh_and_mul(torch::Tensor& out, torch::Tensor& input) {
  gated(out, input, "gelu_tanh_and_mul", gelu_tanh);
}

void fatrelu_and_mul(torch::Tensor& out, torch::Tensor& input, double threshold) {
  const float t = static_cast<float>(threshold);
  gated(out, input, "fatrelu_and_mul", [t](float x) { return x > t ? x : 0.0f; });
}

// Interleaved layout: gate = input[..., 0::2], up = input[..., 1::2].
void swigluoai_and_mul(torch::Tensor& out, torch::Tensor& input, double alpha, double limit) {
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(),
              "swigluoai_and_mul: input and out must be contiguous");
  const int64_t d = input.size(-1) / 2;
  TORCH_CHECK(out.size(-1) == d && out.numel() * 2 == input.numel(),
              "swigluoai_and_mul: out must have the shape of input with the last dimension "
              "halved");
  const float a = static_cast<float>(alpha);
  const float l = static_cast<float>(limit);
  COMPAT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "swigluoai_and_mul", [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    scalar_t* y = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      const float gate = std::fmin(static_cast<float>(x[2 * i]), l);
      const float up = std::fmax(std::fmin(static_cast<float>(x[2 * i + 1]), l), -l);
      const float glu = gate / (1.0f + std::exp(-gate * a));
      y[i] = static_cast<scalar_t>((up + 1.0f) * glu);
    }
  });
}

void gelu_new(torch::Tensor& out, torch::Tensor& input) {
  elementwise(out, input, "gelu_new", gelu_tanh);
}

void gelu_fast(torch::Tensor& out, torch::Tensor& input) {
  elementwise(out, input, "gelu_fast", [](float x) {
    return 0.5f * x * (1.0f + std::tanh(x * 0.79788456f * (1.0f + 0.044715f * x * x)));
  });
}

void gelu_quick(torch::Tensor& out, torch::Tensor& input) {
  elementwise(out, input, "gelu_quick",
              [](float x) { return x / (1.0f + std::exp(-1.702f * x)); });
}
