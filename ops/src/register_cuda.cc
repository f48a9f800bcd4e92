// CUDA registrations of opreg's built-in ops: the `.out` kernels and fused_add_rms_norm_
// (functional forms resolve through the `.out` variants, as on CPU). Compiled only with
// OPREG_BUILD_CUDA=ON; register_cuda_stub.cc stands in otherwise.
//
// Each wrapper validates the call exactly as the CPU registrations do (shape_inference.h: inputs,
// outs, devices, aliasing, with the op's own name in messages), makes the tensors' device
// current for the launch, and calls the launcher of kernels/cuda on the calling thread's current
// stream of that device (opreg/core/cuda_stream.h; the legacy default stream unless the caller
// set one), the stream the CUDA allocator also allocates outputs on. Nothing synchronizes:
// results are ordered on that stream (copy_ to the host synchronizes it).
//
// Layouts: add, mul and split_add read inputs of any strides (the broadcast kernel); every other
// CUDA kernel needs contiguous inputs, and the wrappers refuse strided ones with kValue in the
// usual argument format ("[opreg::rms_norm.out] argument 'input' (#0): expected a contiguous
// tensor (...), got strides [1, 64]"): copying a strided CUDA tensor is not supported by copy_
// yet, so the wrapper cannot make one contiguous for the caller.
#include <cuda_runtime_api.h>

#include <optional>
#include <tuple>

#include "opreg/core/cuda_device_guard.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/dispatch/library.h"
#include "opreg/kernels/cuda/add.h"
#include "opreg/kernels/cuda/fused_add_rms_norm.h"
#include "opreg/kernels/cuda/linear.h"
#include "opreg/kernels/cuda/mul.h"
#include "opreg/kernels/cuda/per_token_quant.h"
#include "opreg/kernels/cuda/rms_norm.h"
#include "opreg/kernels/cuda/silu_and_mul.h"
#include "opreg/kernels/cuda/softmax.h"
#include "opreg/kernels/cuda/split_add.h"
#include "opreg/kernels/cuda/topk.h"
#include "opreg/ops/checks.h"
#include "opreg/ops/shape_inference.h"

namespace opreg::ops {
namespace {

namespace k = ::opreg::kernels::cuda;

// The CUDA device the call runs on: that of `t` (the op's first tensor argument) when it is a
// CUDA tensor, else "some CUDA device" (the checks then report `t`'s device as wrong).
Device CudaDeviceOf(const Tensor& t) {
  return t.defined() && t.is_cuda() ? t.device() : Device::cuda(-1);
}

// The calling thread's current stream for `device` (cuda_stream.h): launches go there, with no
// synchronization, as PyTorch's ops do on getCurrentCUDAStream().
cudaStream_t StreamOf(Device device) {
  int index = device.index;
  if (index < 0 && cudaGetDevice(&index) != cudaSuccess) {
    (void)cudaGetLastError();
    index = 0;
  }
  return static_cast<cudaStream_t>(CurrentCudaStream(index));
}

Tensor& AddOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  const Device dev = CudaDeviceOf(self);
  CheckAddOut("opreg::add.out", self, other, alpha, out, dev);
  CudaDeviceGuard guard(dev.index);
  k::AddOut(self, other, alpha.toDouble(), out, StreamOf(dev));
  return out;
}

Tensor& MulOut(const Tensor& self, const Tensor& other, Tensor& out) {
  const Device dev = CudaDeviceOf(self);
  CheckMulOut("opreg::mul.out", self, other, out, dev);
  CudaDeviceGuard guard(dev.index);
  k::MulOut(self, other, out, StreamOf(dev));
  return out;
}

std::tuple<Tensor&, Tensor&> SplitAddOut(const Tensor& x, const Tensor& y, Tensor& out0,
                                         Tensor& out1) {
  const Device dev = CudaDeviceOf(x);
  CheckSplitAddOut("opreg::split_add.out", x, y, out0, out1, dev);
  CudaDeviceGuard guard(dev.index);
  k::SplitAddOut(x, y, out0, out1, StreamOf(dev));
  return {out0, out1};
}

Tensor& RmsNormOut(const Tensor& input, const Tensor& weight, double eps, Tensor& out) {
  const Device dev = CudaDeviceOf(input);
  CheckRmsNormOut("opreg::rms_norm.out", input, weight, eps, out, dev);
  CheckContiguousInput("opreg::rms_norm.out", "input", 0, input);
  CheckContiguousInput("opreg::rms_norm.out", "weight", 1, weight);
  CudaDeviceGuard guard(dev.index);
  k::RmsNormOut(input, weight, eps, out, StreamOf(dev));
  return out;
}

void FusedAddRmsNorm(Tensor& input, Tensor& residual, const Tensor& weight, double eps) {
  const Device dev = CudaDeviceOf(input);
  CheckFusedAddRmsNormOn("opreg::fused_add_rms_norm_", input, residual, weight, eps, dev);
  CheckContiguousInput("opreg::fused_add_rms_norm_", "input", 0, input);
  CheckContiguousInput("opreg::fused_add_rms_norm_", "residual", 1, residual);
  CheckContiguousInput("opreg::fused_add_rms_norm_", "weight", 2, weight);
  CudaDeviceGuard guard(dev.index);
  k::FusedAddRmsNormInplace(input, residual, weight, eps, StreamOf(dev));
}

Tensor& SiluAndMulOut(const Tensor& x, Tensor& out) {
  const Device dev = CudaDeviceOf(x);
  CheckSiluAndMulOut("opreg::silu_and_mul.out", x, out, dev);
  CheckContiguousInput("opreg::silu_and_mul.out", "x", 0, x);
  CudaDeviceGuard guard(dev.index);
  k::SiluAndMulOut(x, out, StreamOf(dev));
  return out;
}

std::tuple<Tensor&, Tensor&> PerTokenQuantOut(const Tensor& x, DType dtype, Tensor& q,
                                              Tensor& scale) {
  const Device dev = CudaDeviceOf(x);
  CheckPerTokenQuantOut("opreg::per_token_quant.out", x, dtype, q, scale, dev);
  CheckContiguousInput("opreg::per_token_quant.out", "x", 0, x);
  CudaDeviceGuard guard(dev.index);
  k::PerTokenQuantOut(x, q, scale, StreamOf(dev));
  return {q, scale};
}

std::tuple<Tensor&, Tensor&> TopkOut(const Tensor& x, int64_t kk, int64_t dim, bool largest,
                                     Tensor& values, Tensor& indices) {
  const Device dev = CudaDeviceOf(x);
  CheckTopkOut("opreg::topk.out", x, kk, dim, largest, values, indices, dev);
  CheckContiguousInput("opreg::topk.out", "x", 0, x);
  CudaDeviceGuard guard(dev.index);
  k::TopkOut(x, kk, WrapDim("opreg::topk.out", "dim", 2, dim, x.dim()), largest, values, indices,
             StreamOf(dev));
  return {values, indices};
}

Tensor& SoftmaxOut(const Tensor& x, int64_t dim, Tensor& out) {
  const Device dev = CudaDeviceOf(x);
  CheckSoftmaxOut("opreg::softmax.out", x, dim, out, dev);
  CheckContiguousInput("opreg::softmax.out", "x", 0, x);
  CudaDeviceGuard guard(dev.index);
  k::SoftmaxOut(x, WrapDim("opreg::softmax.out", "dim", 1, dim, x.dim()), out, StreamOf(dev));
  return out;
}

Tensor& LinearOut(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                  Tensor& out) {
  const Device dev = CudaDeviceOf(x);
  CheckLinearOut("opreg::linear.out", x, weight, bias, out, dev);
  CheckContiguousInput("opreg::linear.out", "x", 0, x);
  CheckContiguousInput("opreg::linear.out", "weight", 1, weight);
  if (bias) CheckContiguousInput("opreg::linear.out", "bias", 2, *bias);
  CudaDeviceGuard guard(dev.index);
  k::LinearOut(x, weight, bias, out, StreamOf(dev));
  return out;
}

}  // namespace
}  // namespace opreg::ops

OPREG_LIBRARY_IMPL(opreg, CUDA, m) {
  using namespace opreg::ops;  // NOLINT
  m.impl("add.out", &AddOut);
  m.impl("mul.out", &MulOut);
  m.impl("split_add.out", &SplitAddOut);
  m.impl("rms_norm.out", &RmsNormOut);
  m.impl("fused_add_rms_norm_", &FusedAddRmsNorm);
  m.impl("silu_and_mul.out", &SiluAndMulOut);
  m.impl("per_token_quant.out", &PerTokenQuantOut);
  m.impl("topk.out", &TopkOut);
  m.impl("softmax.out", &SoftmaxOut);
  m.impl("linear.out", &LinearOut);
}
