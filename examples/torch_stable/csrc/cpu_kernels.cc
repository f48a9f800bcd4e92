// CPU kernels of examples/torch_stable, against torch's stable API only. Inputs may be strided in
// their leading dims (rows are addressed through stride(0) of the 2-D view), as vLLM's kernels.
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "dispatch.h"
#include "ops.h"

namespace {

// Rows x cols of the last dim, with the row stride of a tensor whose last dim is contiguous.
struct Rows {
  int64_t rows;
  int64_t cols;
  int64_t stride;
};

Rows RowsOf(const Tensor& t, const char* op, const char* arg) {
  STD_TORCH_CHECK(t.dim() >= 1, op, ": ", arg, " must have at least one dim");
  STD_TORCH_CHECK(t.stride(-1) == 1, op, ": ", arg, " must be contiguous in its last dim");
  const int64_t cols = t.size(-1);
  const int64_t rows = cols == 0 ? 0 : t.numel() / cols;
  // Leading dims must collapse into one row stride (a view of a contiguous buffer, or a
  // column slice of one).
  int64_t stride = t.dim() >= 2 ? t.stride(-2) : cols;
  for (int64_t d = t.dim() - 2; d > 0; --d) {
    STD_TORCH_CHECK(t.stride(d - 1) == t.stride(d) * t.size(d), op, ": ", arg,
                    " has leading dims that do not collapse into rows");
  }
  return {rows, cols, stride};
}

void CheckSameType(const Tensor& a, const Tensor& b, const char* op) {
  STD_TORCH_CHECK(a.scalar_type() == b.scalar_type(), op, ": expected one dtype, got ",
                  a.scalar_type(), " and ", b.scalar_type());
}

template <class Act>
void GatedActivation(Tensor& out, const Tensor& input, const char* op, bool act_first, Act act) {
  CheckSameType(out, input, op);
  const Rows in = RowsOf(input, op, "input");
  const Rows o = RowsOf(out, op, "out");
  STD_TORCH_CHECK(in.cols % 2 == 0, op, ": input's last dim must be even, got ", in.cols);
  const int64_t d = in.cols / 2;
  STD_TORCH_CHECK(o.cols == d && o.rows == in.rows, op, ": out must be [..., ", d, "]");
  STABLE_EXAMPLE_DISPATCH_FLOATING(input.scalar_type(), op, [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    scalar_t* y = out.mutable_data_ptr<scalar_t>();
    torch::stable::parallel_for(0, in.rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const scalar_t* row = x + r * in.stride;
        for (int64_t j = 0; j < d; ++j) {
          const float a = static_cast<float>(row[j]);
          const float b = static_cast<float>(row[d + j]);
          y[r * o.stride + j] = static_cast<scalar_t>(act_first ? act(a) * b : a * act(b));
        }
      }
    });
  });
}

template <class Act>
void Elementwise(Tensor& out, const Tensor& input, const char* op, Act act) {
  CheckSameType(out, input, op);
  const Rows in = RowsOf(input, op, "input");
  const Rows o = RowsOf(out, op, "out");
  STD_TORCH_CHECK(o.cols == in.cols && o.rows == in.rows, op, ": out must match input's shape");
  STABLE_EXAMPLE_DISPATCH_FLOATING(input.scalar_type(), op, [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    scalar_t* y = out.mutable_data_ptr<scalar_t>();
    for (int64_t r = 0; r < in.rows; ++r) {
      for (int64_t j = 0; j < in.cols; ++j) {
        y[r * o.stride + j] = static_cast<scalar_t>(act(static_cast<float>(x[r * in.stride + j])));
      }
    }
  });
}

float Silu(float x) { return x / (1.f + std::exp(-x)); }
float GeluErf(float x) { return 0.5f * x * (1.f + std::erf(x * static_cast<float>(M_SQRT1_2))); }
float GeluTanh(float x) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

}  // namespace

void silu_and_mul(Tensor& out, const Tensor& input) {
  GatedActivation(out, input, "silu_and_mul", true, Silu);
}
void mul_and_silu(Tensor& out, const Tensor& input) {
  GatedActivation(out, input, "mul_and_silu", false, Silu);
}
void gelu_and_mul(Tensor& out, const Tensor& input) {
  GatedActivation(out, input, "gelu_and_mul", true, GeluErf);
}
void gelu_tanh_and_mul(Tensor& out, const Tensor& input) {
  GatedActivation(out, input, "gelu_tanh_and_mul", true, GeluTanh);
}
void fatrelu_and_mul(Tensor& out, const Tensor& input, double threshold) {
  const float t = static_cast<float>(threshold);
  GatedActivation(out, input, "fatrelu_and_mul", true, [t](float x) { return x > t ? x : 0.f; });
}
void gelu_new(Tensor& out, const Tensor& input) { Elementwise(out, input, "gelu_new", GeluTanh); }
void gelu_fast(Tensor& out, const Tensor& input) {
  Elementwise(out, input, "gelu_fast", [](float x) {
    return 0.5f * x * (1.f + std::tanh(x * 0.7978845608f * (1.f + 0.044715f * x * x)));
  });
}
void gelu_quick(Tensor& out, const Tensor& input) {
  Elementwise(out, input, "gelu_quick", [](float x) { return x / (1.f + std::exp(-1.702f * x)); });
}

void rms_norm(Tensor& out, const Tensor& input, const Tensor& weight, double epsilon) {
  CheckSameType(out, input, "rms_norm");
  CheckSameType(weight, input, "rms_norm");
  const Rows in = RowsOf(input, "rms_norm", "input");
  const Rows o = RowsOf(out, "rms_norm", "result");
  STD_TORCH_CHECK(weight.dim() == 1 && weight.size(0) == in.cols && weight.is_contiguous(),
                  "rms_norm: weight must be a contiguous [", in.cols, "] tensor");
  STD_TORCH_CHECK(o.rows == in.rows && o.cols == in.cols, "rms_norm: result must match input");
  STABLE_EXAMPLE_DISPATCH_FLOATING(input.scalar_type(), "rms_norm", [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    const scalar_t* w = weight.const_data_ptr<scalar_t>();
    scalar_t* y = out.mutable_data_ptr<scalar_t>();
    for (int64_t r = 0; r < in.rows; ++r) {
      float ss = 0.f;
      for (int64_t j = 0; j < in.cols; ++j) {
        const float v = static_cast<float>(x[r * in.stride + j]);
        ss += v * v;
      }
      const float inv =
          1.f / std::sqrt(ss / static_cast<float>(in.cols) + static_cast<float>(epsilon));
      for (int64_t j = 0; j < in.cols; ++j) {
        // Rounded to the input dtype before the weight, as vLLM's kernel does.
        const scalar_t normed =
            static_cast<scalar_t>(static_cast<float>(x[r * in.stride + j]) * inv);
        y[r * o.stride + j] =
            static_cast<scalar_t>(static_cast<float>(normed) * static_cast<float>(w[j]));
      }
    }
  });
}

void fused_add_rms_norm(Tensor& input, Tensor& residual, const Tensor& weight, double epsilon) {
  CheckSameType(residual, input, "fused_add_rms_norm");
  CheckSameType(weight, input, "fused_add_rms_norm");
  const Rows in = RowsOf(input, "fused_add_rms_norm", "input");
  const Rows res = RowsOf(residual, "fused_add_rms_norm", "residual");
  STD_TORCH_CHECK(res.rows == in.rows && res.cols == in.cols,
                  "fused_add_rms_norm: residual must match input");
  STD_TORCH_CHECK(weight.dim() == 1 && weight.size(0) == in.cols,
                  "fused_add_rms_norm: weight must be [", in.cols, "]");
  STABLE_EXAMPLE_DISPATCH_FLOATING(input.scalar_type(), "fused_add_rms_norm", [&] {
    scalar_t* x = input.mutable_data_ptr<scalar_t>();
    scalar_t* rsd = residual.mutable_data_ptr<scalar_t>();
    const scalar_t* w = weight.const_data_ptr<scalar_t>();
    for (int64_t r = 0; r < in.rows; ++r) {
      float ss = 0.f;
      for (int64_t j = 0; j < in.cols; ++j) {
        const scalar_t sum = static_cast<scalar_t>(static_cast<float>(x[r * in.stride + j]) +
                                                   static_cast<float>(rsd[r * res.stride + j]));
        rsd[r * res.stride + j] = sum;
        const float v = static_cast<float>(sum);
        ss += v * v;
      }
      const float inv =
          1.f / std::sqrt(ss / static_cast<float>(in.cols) + static_cast<float>(epsilon));
      for (int64_t j = 0; j < in.cols; ++j) {
        const scalar_t normed =
            static_cast<scalar_t>(static_cast<float>(rsd[r * res.stride + j]) * inv);
        x[r * in.stride + j] =
            static_cast<scalar_t>(static_cast<float>(normed) * static_cast<float>(w[j]));
      }
    }
  });
}

// query/key: [tokens, heads * head_size] (or [tokens, heads, head_size]); cos_sin_cache:
// [max_position, rot_dim] (cos halves then sin halves); positions: [tokens] int64.
void rotary_embedding(const Tensor& positions, Tensor& query, std::optional<Tensor> key,
                      int64_t head_size, const Tensor& cos_sin_cache, bool is_neox) {
  STD_TORCH_CHECK(positions.scalar_type() == torch::headeronly::ScalarType::Long,
                  "rotary_embedding: positions must be int64");
  CheckSameType(cos_sin_cache, query, "rotary_embedding");
  const int64_t tokens = positions.numel();
  const int64_t rot_dim = cos_sin_cache.size(1);
  STD_TORCH_CHECK(rot_dim <= head_size && rot_dim % 2 == 0, "rotary_embedding: bad rot_dim ",
                  rot_dim, " for head_size ", head_size);
  const int64_t* pos = positions.const_data_ptr<int64_t>();
  auto apply = [&](Tensor& t, const char* arg) {
    const Rows rows = RowsOf(t, "rotary_embedding", arg);
    STD_TORCH_CHECK(tokens > 0 && (rows.rows * rows.cols) % (tokens * head_size) == 0,
                    "rotary_embedding: ", arg, " must hold tokens x heads x head_size");
    const int64_t heads = rows.rows * rows.cols / (tokens * head_size);
    const int64_t token_stride = t.stride(0);
    STABLE_EXAMPLE_DISPATCH_FLOATING(t.scalar_type(), "rotary_embedding", [&] {
      scalar_t* data = t.mutable_data_ptr<scalar_t>();
      const scalar_t* cache = cos_sin_cache.const_data_ptr<scalar_t>();
      const int64_t half = rot_dim / 2;
      for (int64_t i = 0; i < tokens; ++i) {
        const scalar_t* cos = cache + pos[i] * rot_dim;
        const scalar_t* sin = cos + half;
        for (int64_t h = 0; h < heads; ++h) {
          scalar_t* v = data + i * token_stride + h * head_size;
          for (int64_t j = 0; j < half; ++j) {
            const int64_t a = is_neox ? j : 2 * j;
            const int64_t b = is_neox ? j + half : 2 * j + 1;
            const float x = static_cast<float>(v[a]);
            const float y = static_cast<float>(v[b]);
            const float c = static_cast<float>(cos[j]);
            const float s = static_cast<float>(sin[j]);
            v[a] = static_cast<scalar_t>(x * c - y * s);
            v[b] = static_cast<scalar_t>(y * c + x * s);
          }
        }
      }
    });
  };
  apply(query, "query");
  if (key.has_value()) apply(*key, "key");
}

void topk_softmax(Tensor& topk_weights, Tensor& topk_indices, Tensor& token_expert_indices,
                  const Tensor& gating_output, bool renormalize) {
  const Rows g = RowsOf(gating_output, "topk_softmax", "gating_output");
  const int64_t k = topk_weights.size(-1);
  STD_TORCH_CHECK(topk_weights.scalar_type() == torch::headeronly::ScalarType::Float,
                  "topk_softmax: topk_weights must be float32");
  // Indices may be int32 or uint32, as vLLM's kernel takes them.
  const auto index_type = topk_indices.scalar_type();
  STD_TORCH_CHECK((index_type == torch::headeronly::ScalarType::Int ||
                   index_type == torch::headeronly::ScalarType::UInt32) &&
                      token_expert_indices.scalar_type() == torch::headeronly::ScalarType::Int,
                  "topk_softmax: topk_indices must be int32 or uint32 and token_expert_indices "
                  "int32");
  STD_TORCH_CHECK(k <= g.cols, "topk_softmax: k ", k, " exceeds ", g.cols, " experts");
  STD_TORCH_CHECK(topk_weights.is_contiguous() && topk_indices.is_contiguous() &&
                      token_expert_indices.is_contiguous(),
                  "topk_softmax: outputs must be contiguous");
  float* w = topk_weights.mutable_data_ptr<float>();
  const bool unsigned_indices = index_type == torch::headeronly::ScalarType::UInt32;
  int32_t* idx = unsigned_indices ? nullptr : topk_indices.mutable_data_ptr<int32_t>();
  uint32_t* uidx = unsigned_indices ? topk_indices.mutable_data_ptr<uint32_t>() : nullptr;
  int32_t* tok = token_expert_indices.mutable_data_ptr<int32_t>();
  STABLE_EXAMPLE_DISPATCH_FLOATING(gating_output.scalar_type(), "topk_softmax", [&] {
    const scalar_t* x = gating_output.const_data_ptr<scalar_t>();
    std::vector<float> p(static_cast<size_t>(g.cols));
    std::vector<int32_t> order(static_cast<size_t>(g.cols));
    for (int64_t r = 0; r < g.rows; ++r) {
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < g.cols; ++j)
        mx = std::max(mx, static_cast<float>(x[r * g.stride + j]));
      float sum = 0.f;
      for (int64_t j = 0; j < g.cols; ++j) {
        p[j] = std::exp(static_cast<float>(x[r * g.stride + j]) - mx);
        sum += p[j];
      }
      for (float& v : p) v /= sum;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int32_t a, int32_t b) { return p[a] > p[b]; });
      float picked = 0.f;
      for (int64_t j = 0; j < k; ++j) picked += p[order[j]];
      for (int64_t j = 0; j < k; ++j) {
        w[r * k + j] = renormalize ? p[order[j]] / picked : p[order[j]];
        if (unsigned_indices) {
          uidx[r * k + j] = static_cast<uint32_t>(order[j]);
        } else {
          idx[r * k + j] = order[j];
        }
        tok[r * k + j] = static_cast<int32_t>(j * g.rows + r);
      }
    }
  });
}

namespace {
int8_t ClampInt8(float v) {
  v = std::nearbyint(v);
  return static_cast<int8_t>(std::min(127.f, std::max(-128.f, v)));
}
}  // namespace

void static_scaled_int8_quant(Tensor& out, const Tensor& input, const Tensor& scale,
                              std::optional<Tensor> azp) {
  STD_TORCH_CHECK(out.scalar_type() == torch::headeronly::ScalarType::Char,
                  "static_scaled_int8_quant: result must be int8");
  STD_TORCH_CHECK(scale.numel() == 1 && scale.scalar_type() == torch::headeronly::ScalarType::Float,
                  "static_scaled_int8_quant: scale must be one float32");
  const Rows in = RowsOf(input, "static_scaled_int8_quant", "input");
  const Rows o = RowsOf(out, "static_scaled_int8_quant", "result");
  const float s = *scale.const_data_ptr<float>();
  const int32_t zp = azp.has_value() ? *azp->const_data_ptr<int32_t>() : 0;
  STABLE_EXAMPLE_DISPATCH_FLOATING(input.scalar_type(), "static_scaled_int8_quant", [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    int8_t* y = out.mutable_data_ptr<int8_t>();
    for (int64_t r = 0; r < in.rows; ++r) {
      for (int64_t j = 0; j < in.cols; ++j) {
        y[r * o.stride + j] =
            ClampInt8(static_cast<float>(x[r * in.stride + j]) / s + static_cast<float>(zp));
      }
    }
  });
}

void dynamic_scaled_int8_quant(Tensor& out, const Tensor& input, Tensor& scales,
                               std::optional<Tensor> azp) {
  STD_TORCH_CHECK(out.scalar_type() == torch::headeronly::ScalarType::Char,
                  "dynamic_scaled_int8_quant: result must be int8");
  STD_TORCH_CHECK(!azp.has_value(), "dynamic_scaled_int8_quant: azp is not implemented here");
  const Rows in = RowsOf(input, "dynamic_scaled_int8_quant", "input");
  const Rows o = RowsOf(out, "dynamic_scaled_int8_quant", "result");
  STD_TORCH_CHECK(
      scales.numel() == in.rows && scales.scalar_type() == torch::headeronly::ScalarType::Float,
      "dynamic_scaled_int8_quant: scale must hold one float32 per token");
  float* sc = scales.mutable_data_ptr<float>();
  STABLE_EXAMPLE_DISPATCH_FLOATING(input.scalar_type(), "dynamic_scaled_int8_quant", [&] {
    const scalar_t* x = input.const_data_ptr<scalar_t>();
    int8_t* y = out.mutable_data_ptr<int8_t>();
    for (int64_t r = 0; r < in.rows; ++r) {
      float amax = 0.f;
      for (int64_t j = 0; j < in.cols; ++j) {
        amax = std::max(amax, std::fabs(static_cast<float>(x[r * in.stride + j])));
      }
      const float s = amax / 127.f;
      sc[r] = s;
      const float inv = s == 0.f ? 0.f : 127.f / amax;
      for (int64_t j = 0; j < in.cols; ++j) {
        y[r * o.stride + j] = ClampInt8(static_cast<float>(x[r * in.stride + j]) * inv);
      }
    }
  });
}

// A[:, perm] for a 2-D A and an int32 permutation of its columns.
Tensor permute_cols(const Tensor& a, const Tensor& perm) {
  STD_TORCH_CHECK(a.dim() == 2, "permute_cols: A must be 2-D");
  STD_TORCH_CHECK(perm.dim() == 1 && perm.size(0) == a.size(1) &&
                      perm.scalar_type() == torch::headeronly::ScalarType::Int,
                  "permute_cols: perm must be int32 [", a.size(1), "]");
  Tensor ac = torch::stable::contiguous(a);
  Tensor out = torch::stable::empty_like(ac);
  const int32_t* p = perm.const_data_ptr<int32_t>();
  const int64_t rows = a.size(0), cols = a.size(1);
  for (int64_t j = 0; j < cols; ++j) {
    STD_TORCH_CHECK(p[j] >= 0 && p[j] < cols, "permute_cols: perm[", j, "] = ", p[j],
                    " is out of range");
  }
  STABLE_EXAMPLE_DISPATCH_FLOATING(a.scalar_type(), "permute_cols", [&] {
    const scalar_t* x = ac.const_data_ptr<scalar_t>();
    scalar_t* y = out.mutable_data_ptr<scalar_t>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = x[r * cols + p[j]];
    }
  });
  return out;
}

Tensor rms_norm_out_of_place(const Tensor& input, const Tensor& weight, double epsilon) {
  Tensor out = torch::stable::new_empty(input, input.sizes());
  rms_norm(out, input, weight, epsilon);
  return out;
}
