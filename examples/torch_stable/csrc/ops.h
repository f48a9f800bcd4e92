// The kernels of examples/torch_stable: vLLM's stable-ABI op schemas (activations, RMS norm,
// rotary embedding, top-k softmax, int8 quantization) with CPU kernels written against torch's
// stable API only (torch::stable::Tensor, torch/csrc/stable/ops.h), and CUDA kernels for the
// activations and RMS norm.
#pragma once

#include <optional>
#include <torch/csrc/stable/tensor.h>

using torch::stable::Tensor;

// Activations: out = act(x[..., :d]) * x[..., d:] (or the reverse for mul_and_silu).
void silu_and_mul(Tensor& out, const Tensor& input);
void mul_and_silu(Tensor& out, const Tensor& input);
void gelu_and_mul(Tensor& out, const Tensor& input);
void gelu_tanh_and_mul(Tensor& out, const Tensor& input);
void fatrelu_and_mul(Tensor& out, const Tensor& input, double threshold);
// Element-wise activations.
void gelu_new(Tensor& out, const Tensor& input);
void gelu_fast(Tensor& out, const Tensor& input);
void gelu_quick(Tensor& out, const Tensor& input);

void rms_norm(Tensor& out, const Tensor& input, const Tensor& weight, double epsilon);
void fused_add_rms_norm(Tensor& input, Tensor& residual, const Tensor& weight, double epsilon);

void rotary_embedding(const Tensor& positions, Tensor& query, std::optional<Tensor> key,
                      int64_t head_size, const Tensor& cos_sin_cache, bool is_neox);

void topk_softmax(Tensor& topk_weights, Tensor& topk_indices, Tensor& token_expert_indices,
                  const Tensor& gating_output, bool renormalize);

void static_scaled_int8_quant(Tensor& out, const Tensor& input, const Tensor& scale,
                              std::optional<Tensor> azp);
void dynamic_scaled_int8_quant(Tensor& out, const Tensor& input, Tensor& scales,
                               std::optional<Tensor> azp);

// Functional ops (returns new tensors).
Tensor permute_cols(const Tensor& a, const Tensor& perm);
Tensor rms_norm_out_of_place(const Tensor& input, const Tensor& weight, double epsilon);

#ifdef STABLE_EXAMPLE_CUDA
void silu_and_mul_cuda(Tensor& out, const Tensor& input);
void rms_norm_cuda(Tensor& out, const Tensor& input, const Tensor& weight, double epsilon);
#endif
