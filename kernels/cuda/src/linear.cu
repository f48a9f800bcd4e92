// opreg::linear.out on CUDA (see linear.h): cublasGemmEx plus a bias-add kernel.
#include <cublas_v2.h>

#include <climits>
#include <mutex>
#include <unordered_map>

#include "device_helpers.cuh"
#include "opreg/kernels/cuda/linear.h"

namespace opreg {
namespace kernels {
namespace cuda {
namespace {

using namespace detail;

void CheckCublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  OPREG_THROW(kRuntime, "linear: ", what, " failed: ", cublasGetStatusString(s), " (status ",
              static_cast<int>(s), ")");
}

// The calling thread's cuBLAS handle for the current device (handles are not thread-safe to
// share while binding streams; destroyed when the thread exits).
cublasHandle_t ThreadHandle() {
  struct Handles {
    std::unordered_map<int, cublasHandle_t> by_device;
    ~Handles() {
      for (auto& [device, h] : by_device) cublasDestroy(h);  // Errors at exit are harmless.
    }
  };
  thread_local Handles handles;
  int device = 0;
  CheckCuda(cudaGetDevice(&device), "linear: cudaGetDevice");
  auto it = handles.by_device.find(device);
  if (it != handles.by_device.end()) return it->second;
  cublasHandle_t h = nullptr;
  CheckCublas(cublasCreate(&h), "cublasCreate");
  handles.by_device.emplace(device, h);
  return h;
}

cudaDataType_t CudaType(DType d) {
  switch (d) {
    case DType::kFloat32:
      return CUDA_R_32F;
    case DType::kFloat16:
      return CUDA_R_16F;
    case DType::kBFloat16:
      return CUDA_R_16BF;
    default:
      OPREG_THROW(kType, "linear(): CUDA kernel supports f32, f16 and bf16, got ", DTypeName(d));
  }
}

// out viewed as [rows, n]; bias [n]. Grid-stride over vectors of out when n is a multiple of the
// vector width and the pointers are aligned (a vector never straddles a row), scalar otherwise.
template <class T, bool kVectorized>
__global__ void BiasAddKernel(T* out, const T* __restrict__ bias, int64_t total, int64_t n) {
  constexpr int V = kVectorized ? Vector<T>::kSize : 1;
  const int64_t items = total / V;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < items;
       i += stride) {
    const int64_t col = (i * V) % n;
    if constexpr (kVectorized) {
      Vector<T> o = LoadVector(out + i * V);
      const Vector<T> b = LoadVector(bias + col);
#pragma unroll
      for (int j = 0; j < V; ++j) o.v[j] = FromFloat<T>(ToFloat(o.v[j]) + ToFloat(b.v[j]));
      StoreVector(out + i * V, o);
    } else {
      out[i] = FromFloat<T>(ToFloat(out[i]) + ToFloat(bias[col]));
    }
  }
}

}  // namespace

void BiasAddInplace(const Tensor& out, const Tensor& bias, cudaStream_t stream) {
  const char* name = "linear";
  CheckCudaTensor(out, name, "out");
  CheckCudaTensor(bias, name, "bias");
  CheckContiguous(out, name, "out");
  CheckContiguous(bias, name, "bias");
  CheckSameDType(out, bias, name, "out", "bias");
  const int64_t n = bias.numel();
  OPREG_CHECK_VALUE(out.dim() >= 1 && out.size(-1) == n, name, "(): 'bias' has ", n,
                    " elements, out's last dim is ", out.dim() >= 1 ? out.size(-1) : 0);
  const int64_t total = out.numel();
  if (total == 0) return;
  constexpr int kThreads = 256;
  DispatchFloating(out.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = Vector<T>::kSize;
    T* po = static_cast<T*>(out.data_ptr());
    const T* pb = static_cast<const T*>(bias.data_ptr());
    if (n % V == 0 && Aligned16(po) && Aligned16(pb)) {
      BiasAddKernel<T, true>
          <<<GridStrideBlocks(total / V, kThreads), kThreads, 0, stream>>>(po, pb, total, n);
    } else {
      BiasAddKernel<T, false>
          <<<GridStrideBlocks(total, kThreads), kThreads, 0, stream>>>(po, pb, total, n);
    }
    CheckLaunch(name);
  });
}

void LinearOut(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
               const Tensor& out, cudaStream_t stream) {
  const char* name = "linear";
  CheckCudaTensor(x, name, "x");
  CheckCudaTensor(weight, name, "weight");
  CheckCudaTensor(out, name, "out");
  CheckContiguous(x, name, "x");
  CheckContiguous(weight, name, "weight");
  CheckContiguous(out, name, "out");
  CheckSameDType(x, weight, name, "x", "weight");
  CheckSameDType(x, out, name, "x", "out");
  OPREG_CHECK_VALUE(x.dim() >= 1 && weight.dim() == 2 && weight.size(1) == x.size(-1), name,
                    "(): expected x [..., K] and weight [N, K], got ", x.ToString(), " and ",
                    weight.ToString());
  const int64_t K = x.size(-1);
  const int64_t N = weight.size(0);
  const int64_t M = K == 0 ? out.numel() / (N == 0 ? 1 : N) : x.numel() / K;
  OPREG_CHECK_VALUE(out.dim() == x.dim() && out.size(-1) == N && out.numel() == M * N, name,
                    "(): 'out' must have shape [..., ", N, "] matching x, got ", out.ToString());
  OPREG_CHECK_VALUE(M <= INT_MAX && N <= INT_MAX && K <= INT_MAX, name,
                    "(): GEMM dims exceed cuBLAS's int range: M=", M, " N=", N, " K=", K);
  if (M == 0 || N == 0) return;
  const cudaDataType_t type = CudaType(x.dtype());
  cublasHandle_t handle = ThreadHandle();
  CheckCublas(cublasSetStream(handle, stream), "cublasSetStream");
  const float alpha = 1.f;
  const float beta = 0.f;
  if (K == 0) {
    CheckCuda(cudaMemsetAsync(out.data_ptr(), 0, out.nbytes(), stream), "linear: cudaMemsetAsync");
  } else {
    // Column-major: out^T [N, M] = weight [N, K] (stored as K x N, so op T) * x^T [K, M].
    CheckCublas(
        cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(M),
                     static_cast<int>(K), &alpha, weight.data_ptr(), type, static_cast<int>(K),
                     x.data_ptr(), type, static_cast<int>(K), &beta, out.data_ptr(), type,
                     static_cast<int>(N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  }
  if (bias.has_value() && bias->defined()) BiasAddInplace(out, *bias, stream);
}

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
