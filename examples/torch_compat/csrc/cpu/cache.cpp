#include <cstring>

#include <torch/all.h>

#include "../ops.h"

// key/value: [num_tokens, num_heads, head_size]; caches: [num_blocks, block_size, num_heads,
// head_size]; slot_mapping[i] = block * block_size + offset, or -1 for padding tokens.
void reshape_and_cache_flash(torch::Tensor& key, torch::Tensor& value, torch::Tensor& key_cache,
                             torch::Tensor& value_cache, torch::Tensor& slot_mapping,
                             const std::string& kv_cache_dtype, torch::Tensor& k_scale,
                             torch::Tensor& v_scale) {
  TORCH_CHECK(kv_cache_dtype == "auto",
              "reshape_and_cache_flash: unsupported kv_cache_dtype '", kv_cache_dtype,
              "' (this CPU kernel stores the cache in the model's dtype: 'auto')");
  TORCH_CHECK(key.scalar_type() == key_cache.scalar_type() &&
                  value.scalar_type() == value_cache.scalar_type(),
              "reshape_and_cache_flash: caches must have the dtype of key and value");
  TORCH_CHECK(slot_mapping.scalar_type() == at::kLong,
              "reshape_and_cache_flash: slot_mapping must be int64");
  TORCH_CHECK(key_cache.is_contiguous() && value_cache.is_contiguous(),
              "reshape_and_cache_flash: caches must be contiguous");
  const int64_t tokens = slot_mapping.size(0);
  const int64_t block_size = key_cache.size(1);
  const int64_t heads = key.size(1), head_size = key.size(2);
  const int64_t row_bytes = heads * head_size * key.element_size();
  const torch::Tensor k = key.contiguous(), v = value.contiguous();
  const int64_t* slots = slot_mapping.const_data_ptr<int64_t>();
  auto* kc = static_cast<char*>(key_cache.data_ptr());
  auto* vc = static_cast<char*>(value_cache.data_ptr());
  const auto* ks = static_cast<const char*>(k.const_data_ptr());
  const auto* vs = static_cast<const char*>(v.const_data_ptr());
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t slot = slots[t];
    if (slot < 0) continue;
    TORCH_CHECK(slot < key_cache.size(0) * block_size, "reshape_and_cache_flash: slot ", slot,
                " is outside the cache");
    std::memcpy(kc + slot * row_bytes, ks + t * row_bytes, row_bytes);
    std::memcpy(vc + slot * row_bytes, vs + t * row_bytes, row_bytes);
  }
}

void swap_blocks(torch::Tensor& src, torch::Tensor& dst, int64_t block_size_in_bytes,
                 const torch::Tensor& block_mapping) {
  TORCH_CHECK(src.device().is_cpu() && dst.device().is_cpu(),
              "swap_blocks: this kernel copies between CPU tensors");
  TORCH_CHECK(block_mapping.device().is_cpu(), "swap_blocks: block_mapping must be on the CPU");
  TORCH_CHECK(block_mapping.dim() == 2 && block_mapping.size(1) == 2,
              "swap_blocks: block_mapping must be [num_pairs, 2]");
  const torch::Tensor mapping = block_mapping.to(at::kLong).contiguous();
  const int64_t* pairs = mapping.const_data_ptr<int64_t>();
  auto* s = static_cast<const char*>(src.const_data_ptr());
  auto* d = static_cast<char*>(dst.data_ptr());
  const int64_t src_bytes = src.numel() * src.element_size();
  const int64_t dst_bytes = dst.numel() * dst.element_size();
  for (int64_t i = 0; i < mapping.size(0); ++i) {
    const int64_t from = pairs[2 * i] * block_size_in_bytes;
    const int64_t to = pairs[2 * i + 1] * block_size_in_bytes;
    TORCH_CHECK(from >= 0 && from + block_size_in_bytes <= src_bytes && to >= 0 &&
                    to + block_size_in_bytes <= dst_bytes,
                "swap_blocks: pair ", i, " (", pairs[2 * i], " -> ", pairs[2 * i + 1],
                ") is out of range");
    std::memcpy(d + to, s + from, block_size_in_bytes);
  }
}

int64_t get_cache_block_bytes(int64_t block_size, int64_t num_heads, int64_t head_size,
                              int64_t element_bytes) {
  return block_size * num_heads * head_size * element_bytes;
}
