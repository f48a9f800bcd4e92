#include <cmath>

#include <ATen/Parallel.h>
#include <torch/all.h>

#include "../dispatch_utils.h"
#include "../ops.h"

namespace {

void check_norm_args(const char* name, const torch::Tensor& input, const torch::Tensor& weight) {
  TORCH_CHECK(input.is_contiguous(), name, ": input must be contiguous");
  TORCH_CHECK(weight.dim() == 1 && weight.size(0) == input.size(-1), name,
              ": weight must be 1-d with the size of input's last dimension (",
              input.size(-1), "), got ", weight.sizes());
  TORCH_CHECK(weight.scalar_type() == input.scalar_type(), name, ": weight has dtype ",
              weight.scalar_type(), " but input has ", input.scalar_type());
}

}  // namespace

void rms_norm(torch::Tensor& out, torch::Tensor& input, torch::Tensor& weight, double epsilon) {
  check_norm_args("rms_norm", input, weight);
  TORCH_CHECK(out.is_contiguous() && out.sizes() == input.sizes(),
              "rms_norm: out must be contiguous with input's shape");
  const int64_t hidden = input.size(-1);
  const int64_t rows = hidden == 0 ? 0 : input.numel() / hidden;
  COMPAT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "rms_norm", [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    const scalar_t* w = weight.const_data_ptr<scalar_t>();
    scalar_t* y = out.data_ptr<scalar_t>();
    at::parallel_for(0, rows, 8, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        float variance = 0.0f;
        for (int64_t i = 0; i < hidden; ++i) {
          const float v = static_cast<float>(x[r * hidden + i]);
          variance += v * v;
        }
        const float scale = 1.0f / std::sqrt(variance / hidden + static_cast<float>(epsilon));
        for (int64_t i = 0; i < hidden; ++i) {
          const scalar_t normed = static_cast<scalar_t>(static_cast<float>(x[r * hidden + i]) *
                                                        scale);
          y[r * hidden + i] =
              static_cast<scalar_t>(static_cast<float>(normed) * static_cast<float>(w[i]));
        }
      }
    });
  });
}

void fused_add_rms_norm(torch::Tensor& input, torch::Tensor& residual, torch::Tensor& weight,
                        double epsilon) {
  check_norm_args("fused_add_rms_norm", input, weight);
  TORCH_CHECK(residual.is_contiguous() && residual.sizes() == input.sizes() &&
                  residual.scalar_type() == input.scalar_type(),
              "fused_add_rms_norm: residual must be contiguous with input's shape and dtype");
  const int64_t hidden = input.size(-1);
  const int64_t rows = hidden == 0 ? 0 : input.numel() / hidden;
  COMPAT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "fused_add_rms_norm", [&] {
    scalar_t* x = input.data_ptr<scalar_t>();
    scalar_t* res = residual.data_ptr<scalar_t>();
    const scalar_t* w = weight.const_data_ptr<scalar_t>();
    for (int64_t r = 0; r < rows; ++r) {
      float variance = 0.0f;
      for (int64_t i = 0; i < hidden; ++i) {
        const scalar_t sum = static_cast<scalar_t>(static_cast<float>(x[r * hidden + i]) +
                                                   static_cast<float>(res[r * hidden + i]));
        res[r * hidden + i] = sum;
        variance += static_cast<float>(sum) * static_cast<float>(sum);
      }
      const float scale = 1.0f / std::sqrt(variance / hidden + static_cast<float>(epsilon));
      for (int64_t i = 0; i < hidden; ++i) {
        const scalar_t normed =
            static_cast<scalar_t>(static_cast<float>(res[r * hidden + i]) * scale);
        x[r * hidden + i] =
            static_cast<scalar_t>(static_cast<float>(normed) * static_cast<float>(w[i]));
      }
    }
  });
}
