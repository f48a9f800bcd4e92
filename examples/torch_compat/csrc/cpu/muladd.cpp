// muladd(a, b, c) = a * b + c, written as PyTorch's custom C++ op tutorial writes its kernels:
// checks with TORCH_CHECK / TORCH_INTERNAL_ASSERT, a contiguous copy, torch::empty for the
// result, and the CPU kernel registered by TORCH_LIBRARY_IMPL apart from the schema. The
// package in ../../python registers its fake and its autograd formula from Python.
#include <ATen/Operators.h>
#include <torch/all.h>
#include <torch/library.h>

at::Tensor muladd_cpu(const at::Tensor& a, const at::Tensor& b, double c) {
  TORCH_CHECK(a.sizes() == b.sizes(), "muladd: a and b must have the same shape");
  TORCH_CHECK(a.dtype() == at::kFloat, "muladd: a must be float32");
  TORCH_CHECK(b.dtype() == at::kFloat, "muladd: b must be float32");
  TORCH_INTERNAL_ASSERT(a.device().type() == at::DeviceType::CPU);
  TORCH_INTERNAL_ASSERT(b.device().type() == at::DeviceType::CPU);
  at::Tensor a_contig = a.contiguous();
  at::Tensor b_contig = b.contiguous();
  at::Tensor result = torch::empty(a_contig.sizes(), a_contig.options());
  const float* a_ptr = a_contig.data_ptr<float>();
  const float* b_ptr = b_contig.data_ptr<float>();
  float* result_ptr = result.data_ptr<float>();
  for (int64_t i = 0; i < result.numel(); i++) {
    result_ptr[i] = a_ptr[i] * b_ptr[i] + static_cast<float>(c);
  }
  return result;
}

TORCH_LIBRARY_IMPL(compat_kernels, CPU, m) { m.impl("muladd", &muladd_cpu); }
