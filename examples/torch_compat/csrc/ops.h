#pragma once

// The kernels of the compat_kernels example library, declared with libtorch types. Schemas
// and semantics follow vLLM's ops of the same names (csrc/torch_bindings.cpp there).

#include <optional>
#include <string>
#include <tuple>

#include <torch/all.h>

// Activations: input [..., 2 * d] -> out [..., d].
void silu_and_mul(torch::Tensor& out, torch::Tensor& input);
void mul_and_silu(torch::Tensor& out, torch::Tensor& input);
void gelu_and_mul(torch::Tensor& out, torch::Tensor& input);
void gelu_tanh_and_mul(torch::Tensor& out, torch::Tensor& input);
void fatrelu_and_mul(torch::Tensor& out, torch::Tensor& input, double threshold);
void swigluoai_and_mul(torch::Tensor& out, torch::Tensor& input, double alpha, double limit);
// Elementwise activations: out has the shape of input.
void gelu_new(torch::Tensor& out, torch::Tensor& input);
void gelu_fast(torch::Tensor& out, torch::Tensor& input);
void gelu_quick(torch::Tensor& out, torch::Tensor& input);

// Normalization over the last dimension.
void rms_norm(torch::Tensor& out, torch::Tensor& input, torch::Tensor& weight, double epsilon);
void fused_add_rms_norm(torch::Tensor& input, torch::Tensor& residual, torch::Tensor& weight,
                        double epsilon);

// Rotary embedding applied in place to query and (when given) key.
void rotary_embedding(torch::Tensor& positions, torch::Tensor& query,
                      std::optional<torch::Tensor> key, int64_t head_size,
                      torch::Tensor& cos_sin_cache, bool is_neox);

// Quantization.
void static_scaled_fp8_quant(torch::Tensor& out, torch::Tensor const& input,
                             torch::Tensor const& scale,
                             std::optional<std::tuple<int64_t, int64_t>> group_shape);
void dynamic_scaled_fp8_quant(torch::Tensor& out, torch::Tensor const& input,
                              torch::Tensor& scale);
void static_scaled_int8_quant(torch::Tensor& out, torch::Tensor const& input,
                              torch::Tensor const& scale, std::optional<torch::Tensor> const& azp);

// Sampling.
void apply_repetition_penalties_(torch::Tensor& logits, const torch::Tensor& prompt_mask,
                                 const torch::Tensor& output_mask,
                                 const torch::Tensor& repetition_penalties);

// A tensor viewing input's memory without owning it.
torch::Tensor weak_ref_tensor(torch::Tensor& input);

// KV cache.
void reshape_and_cache_flash(torch::Tensor& key, torch::Tensor& value, torch::Tensor& key_cache,
                             torch::Tensor& value_cache, torch::Tensor& slot_mapping,
                             const std::string& kv_cache_dtype, torch::Tensor& k_scale,
                             torch::Tensor& v_scale);
void swap_blocks(torch::Tensor& src, torch::Tensor& dst, int64_t block_size_in_bytes,
                 const torch::Tensor& block_mapping);
int64_t get_cache_block_bytes(int64_t block_size, int64_t num_heads, int64_t head_size,
                              int64_t element_bytes);

#ifdef COMPAT_KERNELS_CUDA
void silu_and_mul_cuda(torch::Tensor& out, torch::Tensor& input);
#endif
