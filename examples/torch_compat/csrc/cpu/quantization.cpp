#include <algorithm>
#include <cmath>

#include <torch/all.h>

#include "../dispatch_utils.h"
#include "../ops.h"

namespace {

constexpr float kFp8Max = 448.0f;  // largest finite float8_e4m3fn

inline c10::Float8_e4m3fn to_fp8(float x) {
  return static_cast<c10::Float8_e4m3fn>(std::fmax(-kFp8Max, std::fmin(x, kFp8Max)));
}

}  // namespace

void static_scaled_fp8_quant(torch::Tensor& out, torch::Tensor const& input,
                             torch::Tensor const& scale,
                             std::optional<std::tuple<int64_t, int64_t>> group_shape) {
  TORCH_CHECK(out.scalar_type() == at::ScalarType::Float8_e4m3fn,
              "static_scaled_fp8_quant: out must be float8_e4m3fn, got ", out.scalar_type());
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous() && out.sizes() == input.sizes(),
              "static_scaled_fp8_quant: input and out must be contiguous with equal shapes");
  TORCH_CHECK(scale.scalar_type() == at::kFloat, "static_scaled_fp8_quant: scale must be float32");
  const int64_t cols = input.size(-1);
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  // The scale's group: the whole tensor, or (group_m, group_n) blocks of the [rows, cols] view.
  int64_t group_m = rows, group_n = cols;
  if (scale.numel() != 1) {
    if (group_shape.has_value()) {
      group_m = std::get<0>(*group_shape);
      group_n = std::get<1>(*group_shape);
    } else {
      TORCH_CHECK(scale.dim() == 2, "static_scaled_fp8_quant: a scale with ", scale.numel(),
                  " elements needs group_shape unless it is 2-d");
      group_m = rows / scale.size(0);
      group_n = cols / scale.size(1);
    }
  }
  TORCH_CHECK(group_m > 0 && group_n > 0, "static_scaled_fp8_quant: bad group shape (", group_m,
              ", ", group_n, ")");
  const int64_t scale_cols = (cols + group_n - 1) / group_n;
  TORCH_CHECK(scale.numel() == ((rows + group_m - 1) / group_m) * scale_cols,
              "static_scaled_fp8_quant: scale has ", scale.numel(),
              " elements, expected one per (", group_m, ", ", group_n, ") group");
  const torch::Tensor s = scale.contiguous();
  const float* sp = s.const_data_ptr<float>();
  auto* y = out.data_ptr<c10::Float8_e4m3fn>();
  COMPAT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "static_scaled_fp8_quant", [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const float inv = 1.0f / sp[(r / group_m) * scale_cols + c / group_n];
        y[r * cols + c] = to_fp8(static_cast<float>(x[r * cols + c]) * inv);
      }
    }
  });
}

void dynamic_scaled_fp8_quant(torch::Tensor& out, torch::Tensor const& input,
                              torch::Tensor& scale) {
  TORCH_CHECK(out.scalar_type() == at::ScalarType::Float8_e4m3fn,
              "dynamic_scaled_fp8_quant: out must be float8_e4m3fn, got ", out.scalar_type());
  TORCH_CHECK(scale.numel() == 1 && scale.scalar_type() == at::kFloat,
              "dynamic_scaled_fp8_quant: scale must be one float32");
  // The scale is computed from the input's absolute maximum (an ATen reduction).
  const float amax = input.abs().amax().item<float>();
  const float s = std::max(amax / kFp8Max, 1e-12f);
  scale.fill_(s);
  static_scaled_fp8_quant(out, input, scale, std::nullopt);
}

void static_scaled_int8_quant(torch::Tensor& out, torch::Tensor const& input,
                              torch::Tensor const& scale, std::optional<torch::Tensor> const& azp) {
  TORCH_CHECK(out.scalar_type() == at::kChar, "static_scaled_int8_quant: out must be int8");
  TORCH_CHECK(scale.numel() == 1, "static_scaled_int8_quant: scale must have one element");
  TORCH_CHECK(!azp || azp->numel() == 1, "static_scaled_int8_quant: azp must have one element");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous() && out.sizes() == input.sizes(),
              "static_scaled_int8_quant: input and out must be contiguous with equal shapes");
  const float inv = 1.0f / scale.item<float>();
  const int32_t zero_point = azp ? azp->item<int32_t>() : 0;
  int8_t* y = out.data_ptr<int8_t>();
  COMPAT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "static_scaled_int8_quant", [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    for (int64_t i = 0; i < input.numel(); ++i) {
      const float q = std::nearbyint(static_cast<float>(x[i]) * inv) + zero_point;
      y[i] = static_cast<int8_t>(std::fmax(-128.0f, std::fmin(q, 127.0f)));
    }
  });
}
