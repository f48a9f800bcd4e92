// opreg::mul.out on CUDA (see mul.h).
#include "binary_elementwise.cuh"
#include "opreg/kernels/cuda/mul.h"

namespace opreg {
namespace kernels {
namespace cuda {
namespace {

struct MulFn {
  __device__ __forceinline__ void operator()(float a, float b, float* r) const { r[0] = a * b; }
};

}  // namespace

void MulOut(const Tensor& self, const Tensor& other, const Tensor& out, cudaStream_t stream) {
  detail::LaunchBinary<1>("mul", self, other, out, nullptr, MulFn{}, stream);
}

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
