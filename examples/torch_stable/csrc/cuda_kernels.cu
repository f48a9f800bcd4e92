// CUDA kernels of examples/torch_stable (silu_and_mul, rms_norm), launched on the current stream
// of the input's device through the stable ABI (DeviceGuard, aoti_torch_get_current_cuda_stream).
// float32 only: the example shows the stable ABI's CUDA path, not a tuned kernel.
#include <cuda_runtime.h>
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/macros.h>
#include <torch/csrc/stable/tensor.h>

#include "ops.h"

namespace {

__global__ void SiluAndMulKernel(float* out, const float* in, int64_t d, int64_t in_stride,
                                 int64_t out_stride) {
  const int64_t row = blockIdx.x;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    const float a = in[row * in_stride + j];
    const float b = in[row * in_stride + d + j];
    out[row * out_stride + j] = a / (1.f + expf(-a)) * b;
  }
}

__global__ void RmsNormKernel(float* out, const float* in, const float* w, int64_t cols,
                              int64_t in_stride, int64_t out_stride, float eps) {
  __shared__ float partial[256];
  const int64_t row = blockIdx.x;
  float ss = 0.f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = in[row * in_stride + j];
    ss += v * v;
  }
  partial[threadIdx.x] = ss;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = rsqrtf(partial[0] / static_cast<float>(cols) + eps);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    out[row * out_stride + j] = in[row * in_stride + j] * inv * w[j];
  }
}

cudaStream_t CurrentStream(int32_t device) {
  void* stream = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(device, &stream));
  return static_cast<cudaStream_t>(stream);
}

void CheckFloatCuda(const Tensor& t, const char* op, const char* arg) {
  STD_TORCH_CHECK(t.is_cuda(), op, ": ", arg, " must be a CUDA tensor");
  STD_TORCH_CHECK(t.scalar_type() == torch::headeronly::ScalarType::Float, op, ": ", arg,
                  " must be float32 on CUDA");
  STD_TORCH_CHECK(t.stride(-1) == 1, op, ": ", arg, " must be contiguous in its last dim");
}

}  // namespace

void silu_and_mul_cuda(Tensor& out, const Tensor& input) {
  CheckFloatCuda(input, "silu_and_mul", "input");
  CheckFloatCuda(out, "silu_and_mul", "result");
  const int64_t d = input.size(-1) / 2;
  const int64_t rows = d == 0 ? 0 : input.numel() / input.size(-1);
  if (rows == 0) return;
  const torch::stable::accelerator::DeviceGuard guard(input.get_device_index());
  SiluAndMulKernel<<<static_cast<unsigned>(rows), 256, 0,
                     CurrentStream(input.get_device_index())>>>(
      out.mutable_data_ptr<float>(), input.const_data_ptr<float>(), d,
      input.dim() >= 2 ? input.stride(-2) : 2 * d, out.dim() >= 2 ? out.stride(-2) : d);
  STD_CUDA_KERNEL_LAUNCH_CHECK();
}

void rms_norm_cuda(Tensor& out, const Tensor& input, const Tensor& weight, double epsilon) {
  CheckFloatCuda(input, "rms_norm", "input");
  CheckFloatCuda(out, "rms_norm", "result");
  CheckFloatCuda(weight, "rms_norm", "weight");
  const int64_t cols = input.size(-1);
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  if (rows == 0) return;
  const torch::stable::accelerator::DeviceGuard guard(input.get_device_index());
  RmsNormKernel<<<static_cast<unsigned>(rows), 256, 0, CurrentStream(input.get_device_index())>>>(
      out.mutable_data_ptr<float>(), input.const_data_ptr<float>(), weight.const_data_ptr<float>(),
      cols, input.dim() >= 2 ? input.stride(-2) : cols, out.dim() >= 2 ? out.stride(-2) : cols,
      static_cast<float>(epsilon));
  STD_CUDA_KERNEL_LAUNCH_CHECK();
}
