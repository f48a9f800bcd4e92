// The functions that vLLM's csrc/cpu/torch_bindings.cpp registers from the source files that
// scripts/real_sources/vllm_cpu_build.sh leaves out, with vLLM's signatures: each raises
// NotImplementedError naming the file and why it was not built, so that the rest of the
// bindings register unchanged. Built the same way for the torch and the opreg build.
#include <torch/all.h>

#include <optional>
#include <tuple>

namespace {

[[noreturn]] void NotBuilt(const char* fn, const char* why) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, fn, ": not built in this run (", why, ")");
  __builtin_unreachable();
}

constexpr char kOneDnn[] = "csrc/cpu/dnnl_kernels.cpp needs oneDNN";
constexpr char kFourBit[] =
    "csrc/cpu/dynamic_4bit_int_moe_cpu.cpp calls at::_ops::_dyn_quant_matmul_4bit";

}  // namespace

void release_dnnl_matmul_handler(int64_t) { NotBuilt(__func__, kOneDnn); }
int64_t create_onednn_scaled_mm_handler(const torch::Tensor&, const torch::Tensor&, at::ScalarType,
                                        bool, bool, int64_t) {
  NotBuilt(__func__, kOneDnn);
}
void onednn_scaled_mm(torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                      const std::optional<torch::Tensor>&, const std::optional<torch::Tensor>&,
                      const std::optional<torch::Tensor>&, const torch::Tensor&) {
  NotBuilt(__func__, kOneDnn);
}
int64_t create_onednn_mm_handler(const torch::Tensor&, int64_t) { NotBuilt(__func__, kOneDnn); }
void onednn_mm(torch::Tensor&, const torch::Tensor&, const std::optional<torch::Tensor>&,
               const torch::Tensor&) {
  NotBuilt(__func__, kOneDnn);
}
bool is_onednn_acl_supported() { NotBuilt(__func__, kOneDnn); }
void static_scaled_int8_quant(torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                              std::optional<torch::Tensor> const&) {
  NotBuilt(__func__, kOneDnn);
}
void dynamic_scaled_int8_quant(torch::Tensor&, const torch::Tensor&, torch::Tensor&,
                               std::optional<torch::Tensor> const&) {
  NotBuilt(__func__, kOneDnn);
}

torch::Tensor dynamic_4bit_int_moe_cpu(torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor,
                                       torch::Tensor, int64_t, int64_t, int64_t, bool, int64_t) {
  NotBuilt(__func__, kFourBit);
}
