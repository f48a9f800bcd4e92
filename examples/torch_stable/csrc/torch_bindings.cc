// The op definitions of examples/torch_stable (vLLM's schemas) and their kernels, registered
// with torch's stable ABI only, so that the same file builds against any runtime of that ABI.
#include <torch/csrc/stable/library.h>

#include "ops.h"

STABLE_TORCH_LIBRARY(stable_kernels, m) {
  m.def("silu_and_mul(Tensor! result, Tensor input) -> ()");
  m.def("mul_and_silu(Tensor! out, Tensor input) -> ()");
  m.def("gelu_and_mul(Tensor! out, Tensor input) -> ()");
  m.def("gelu_tanh_and_mul(Tensor! out, Tensor input) -> ()");
  m.def("fatrelu_and_mul(Tensor! out, Tensor input, float threshold) -> ()");
  m.def("gelu_new(Tensor! out, Tensor input) -> ()");
  m.def("gelu_fast(Tensor! out, Tensor input) -> ()");
  m.def("gelu_quick(Tensor! out, Tensor input) -> ()");
  m.def("rms_norm(Tensor! result, Tensor input, Tensor weight, float epsilon) -> ()");
  m.def("fused_add_rms_norm(Tensor! input, Tensor! residual, Tensor weight, float epsilon) -> ()");
  m.def(
      "rotary_embedding(Tensor positions, Tensor! query, Tensor!? key, int head_size, "
      "Tensor cos_sin_cache, bool is_neox) -> ()");
  m.def(
      "topk_softmax(Tensor! topk_weights, Tensor! topk_indices, Tensor! token_expert_indices, "
      "Tensor gating_output, bool renormalize) -> ()");
  m.def("static_scaled_int8_quant(Tensor! result, Tensor input, Tensor scale, Tensor? azp) -> ()");
  m.def(
      "dynamic_scaled_int8_quant(Tensor! result, Tensor input, Tensor! scale, Tensor? azp) -> ()");
  m.def("permute_cols(Tensor A, Tensor perm) -> Tensor");
  m.def("rms_norm_out_of_place(Tensor input, Tensor weight, float epsilon) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(stable_kernels, CPU, m) {
  m.impl("silu_and_mul", TORCH_BOX(&silu_and_mul));
  m.impl("mul_and_silu", TORCH_BOX(&mul_and_silu));
  m.impl("gelu_and_mul", TORCH_BOX(&gelu_and_mul));
  m.impl("gelu_tanh_and_mul", TORCH_BOX(&gelu_tanh_and_mul));
  m.impl("fatrelu_and_mul", TORCH_BOX(&fatrelu_and_mul));
  m.impl("gelu_new", TORCH_BOX(&gelu_new));
  m.impl("gelu_fast", TORCH_BOX(&gelu_fast));
  m.impl("gelu_quick", TORCH_BOX(&gelu_quick));
  m.impl("rms_norm", TORCH_BOX(&rms_norm));
  m.impl("fused_add_rms_norm", TORCH_BOX(&fused_add_rms_norm));
  m.impl("rotary_embedding", TORCH_BOX(&rotary_embedding));
  m.impl("topk_softmax", TORCH_BOX(&topk_softmax));
  m.impl("static_scaled_int8_quant", TORCH_BOX(&static_scaled_int8_quant));
  m.impl("dynamic_scaled_int8_quant", TORCH_BOX(&dynamic_scaled_int8_quant));
  m.impl("permute_cols", TORCH_BOX(&permute_cols));
  m.impl("rms_norm_out_of_place", TORCH_BOX(&rms_norm_out_of_place));
}

#ifdef STABLE_EXAMPLE_CUDA
STABLE_TORCH_LIBRARY_IMPL(stable_kernels, CUDA, m) {
  m.impl("silu_and_mul", TORCH_BOX(&silu_and_mul_cuda));
  m.impl("rms_norm", TORCH_BOX(&rms_norm_cuda));
}
#endif
