#include <torch/all.h>

#include "../dispatch_utils.h"
#include "../ops.h"

namespace {

// Rotates the first rot_dim elements of each head of `x` ([tokens, heads * head_size] rows
// with row stride `token_stride`) by the angle of its token's position.
template <typename scalar_t>
void rotate(scalar_t* x, const int64_t* positions, const scalar_t* cache, int64_t tokens,
            int64_t heads, int64_t head_size, int64_t token_stride, int64_t head_stride,
            int64_t rot_dim, bool is_neox) {
  const int64_t embed_dim = rot_dim / 2;
  for (int64_t t = 0; t < tokens; ++t) {
    const scalar_t* cos = cache + positions[t] * rot_dim;
    const scalar_t* sin = cos + embed_dim;
    for (int64_t h = 0; h < heads; ++h) {
      scalar_t* head = x + t * token_stride + h * head_stride;
      for (int64_t i = 0; i < embed_dim; ++i) {
        const int64_t a = is_neox ? i : 2 * i;
        const int64_t b = is_neox ? i + embed_dim : 2 * i + 1;
        const float c = static_cast<float>(cos[i]);
        const float s = static_cast<float>(sin[i]);
        const float xa = static_cast<float>(head[a]);
        const float xb = static_cast<float>(head[b]);
        head[a] = static_cast<scalar_t>(xa * c - xb * s);
        head[b] = static_cast<scalar_t>(xb * c + xa * s);
      }
    }
  }
}

}  // namespace

void rotary_embedding(torch::Tensor& positions, torch::Tensor& query,
                      std::optional<torch::Tensor> key, int64_t head_size,
                      torch::Tensor& cos_sin_cache, bool is_neox) {
  TORCH_CHECK(positions.scalar_type() == at::kLong, "rotary_embedding: positions must be int64");
  const int64_t tokens = positions.numel();
  const int64_t rot_dim = cos_sin_cache.size(1);
  TORCH_CHECK(rot_dim <= head_size && rot_dim % 2 == 0,
              "rotary_embedding: cos_sin_cache.size(1) must be even and at most head_size");
  TORCH_CHECK(query.stride(-1) == 1, "rotary_embedding: query's last dimension must be dense");
  TORCH_CHECK(!key.has_value() || key->scalar_type() == query.scalar_type(),
              "rotary_embedding: key and query dtypes differ");
  TORCH_CHECK(cos_sin_cache.is_contiguous() && cos_sin_cache.scalar_type() == query.scalar_type(),
              "rotary_embedding: cos_sin_cache must be contiguous with query's dtype");
  const torch::Tensor pos = positions.contiguous().view({-1});
  // [tokens, heads * head_size] or [tokens, heads, head_size] (or with a batch dimension).
  const int64_t q_heads = query.numel() / (tokens * head_size);
  const int64_t q_token_stride = query.stride(positions.dim() - 1);
  COMPAT_DISPATCH_FLOATING_TYPES(query.scalar_type(), "rotary_embedding", [&] {
    rotate<scalar_t>(query.data_ptr<scalar_t>(), pos.const_data_ptr<int64_t>(),
                     cos_sin_cache.const_data_ptr<scalar_t>(), tokens, q_heads, head_size,
                     q_token_stride, head_size, rot_dim, is_neox);
    if (key.has_value()) {
      const int64_t k_heads = key->numel() / (tokens * head_size);
      rotate<scalar_t>(key->data_ptr<scalar_t>(), pos.const_data_ptr<int64_t>(),
                       cos_sin_cache.const_data_ptr<scalar_t>(), tokens, k_heads, head_size,
                       key->stride(positions.dim() - 1), head_size, rot_dim, is_neox);
    }
  });
}
