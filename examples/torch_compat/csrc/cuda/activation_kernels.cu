#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include "../dispatch_utils.h"
#include "../ops.h"

namespace {

template <typename scalar_t>
__global__ void silu_and_mul_kernel(scalar_t* __restrict__ out,
                                    const scalar_t* __restrict__ input, int64_t d) {
  const int64_t token = blockIdx.x;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float x = static_cast<float>(input[token * 2 * d + i]);
    const float y = static_cast<float>(input[token * 2 * d + d + i]);
    out[token * d + i] = static_cast<scalar_t>(x / (1.0f + expf(-x)) * y);
  }
}

}  // namespace

void silu_and_mul_cuda(torch::Tensor& out, torch::Tensor& input) {
  TORCH_CHECK(input.is_cuda() && input.is_contiguous() && out.is_contiguous(),
              "silu_and_mul (CUDA): contiguous CUDA tensors expected");
  const int64_t d = input.size(-1) / 2;
  const int64_t tokens = d == 0 ? 0 : input.numel() / (2 * d);
  if (tokens == 0) return;
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const dim3 grid(static_cast<unsigned>(tokens));
  const dim3 block(static_cast<unsigned>(std::min<int64_t>(d, 1024)));
  COMPAT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "silu_and_mul_cuda", [&] {
    silu_and_mul_kernel<scalar_t><<<grid, block, 0, stream>>>(
        out.data_ptr<scalar_t>(), input.data_ptr<scalar_t>(), d);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
