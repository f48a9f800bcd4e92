#include <torch/all.h>

#include "../dispatch_utils.h"
#include "../ops.h"

void apply_repetition_penalties_(torch::Tensor& logits, const torch::Tensor& prompt_mask,
                                 const torch::Tensor& output_mask,
                                 const torch::Tensor& repetition_penalties) {
  TORCH_CHECK(logits.dim() == 2, "apply_repetition_penalties_: logits must be 2-d, got ",
              logits.dim(), "-d");
  TORCH_CHECK(prompt_mask.scalar_type() == at::kBool && output_mask.scalar_type() == at::kBool,
              "apply_repetition_penalties_: masks must be bool");
  TORCH_CHECK(prompt_mask.sizes() == logits.sizes() && output_mask.sizes() == logits.sizes(),
              "apply_repetition_penalties_: masks must have the shape of logits");
  TORCH_CHECK(repetition_penalties.numel() == logits.size(0),
              "apply_repetition_penalties_: one penalty per sequence expected");
  const int64_t seqs = logits.size(0), vocab = logits.size(1);
  const torch::Tensor pm = prompt_mask.contiguous(), om = output_mask.contiguous();
  const torch::Tensor penalties = repetition_penalties.contiguous();
  COMPAT_DISPATCH_FLOATING_TYPES(logits.scalar_type(), "apply_repetition_penalties_", [&] {
    TORCH_CHECK(penalties.scalar_type() == logits.scalar_type(),
                "apply_repetition_penalties_: penalties must have the dtype of logits");
    const scalar_t* p = penalties.const_data_ptr<scalar_t>();
    const bool* prompt = pm.const_data_ptr<bool>();
    const bool* output = om.const_data_ptr<bool>();
    for (int64_t s = 0; s < seqs; ++s) {
      scalar_t* row = logits.data_ptr<scalar_t>() + s * logits.stride(0);
      const float penalty = static_cast<float>(p[s]);
      for (int64_t v = 0; v < vocab; ++v) {
        if (!prompt[s * vocab + v] && !output[s * vocab + v]) continue;
        const float l = static_cast<float>(row[v * logits.stride(1)]);
        row[v * logits.stride(1)] = static_cast<scalar_t>(l > 0 ? l / penalty : l * penalty);
      }
    }
  });
}
