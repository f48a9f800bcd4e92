// opreg::fused_add_rms_norm_ on CUDA (see fused_add_rms_norm.h).
#include "device_helpers.cuh"
#include "opreg/kernels/cuda/fused_add_rms_norm.h"
#include "rms_norm_common.cuh"
#include "row_checks.h"

namespace opreg {
namespace kernels {
namespace cuda {
namespace {

using namespace detail;

template <class T, bool kVectorized>
__global__ void FusedAddRmsNormKernel(T* __restrict__ input, T* __restrict__ residual,
                                      const T* __restrict__ weight, int64_t hidden, float eps) {
  const int64_t row = blockIdx.x;
  T* x = input + row * hidden;
  T* res = residual + row * hidden;
  constexpr int V = Vector<T>::kSize;
  const int64_t nvec = kVectorized ? hidden / V : 0;

  // Pass 1: residual = input + residual (rounded to T); sum of squares of the rounded values.
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const Vector<T> a = LoadVector(x + i * V);
    const Vector<T> b = LoadVector(res + i * V);
    Vector<T> z;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      z.v[j] = FromFloat<T>(ToFloat(a.v[j]) + ToFloat(b.v[j]));
      const float f = ToFloat(z.v[j]);
      ss += f * f;
    }
    StoreVector(res + i * V, z);
  }
  for (int64_t i = nvec * V + threadIdx.x; i < hidden; i += blockDim.x) {
    const T z = FromFloat<T>(ToFloat(x[i]) + ToFloat(res[i]));
    const float f = ToFloat(z);
    ss += f * f;
    res[i] = z;
  }
  // Block-wide: also orders every thread's residual stores before pass 2 reads them.
  ss = BlockReduce(ss, SumOp{}, 0.f);
  const float inv = rsqrtf(ss / static_cast<float>(hidden) + eps);

  // Pass 2: input = residual * inv * weight (each thread re-reads elements it wrote itself).
  ScaleRowByWeight<T, kVectorized>(x, res, weight, hidden, inv);
}

}  // namespace

void FusedAddRmsNormInplace(const Tensor& input, const Tensor& residual, const Tensor& weight,
                            double eps, cudaStream_t stream) {
  const char* name = "fused_add_rms_norm_";
  const RowShape rs = CheckRowOp(input, weight, name);
  CheckCudaTensor(residual, name, "residual");
  CheckContiguous(residual, name, "residual");
  CheckSameDType(input, residual, name, "input", "residual");
  OPREG_CHECK_VALUE(residual.sizes() == input.sizes(), name,
                    "(): 'residual' must have input's shape");
  OPREG_CHECK_VALUE(rs.rows == 0 || rs.hidden == 0 || !input.is_alias_of(residual) ||
                        input.data_ptr() != residual.data_ptr(),
                    name, "(): 'input' and 'residual' must not be the same memory");
  if (rs.rows == 0 || rs.hidden == 0) return;
  DispatchFloating(input.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = Vector<T>::kSize;
    T* x = static_cast<T*>(input.data_ptr());
    T* r = static_cast<T*>(residual.data_ptr());
    const T* w = static_cast<const T*>(weight.data_ptr());
    const bool vec = rs.hidden % V == 0 && Aligned16(x) && Aligned16(r) && Aligned16(w);
    const int threads = RowBlockThreads(vec ? rs.hidden / V : rs.hidden);
    if (vec) {
      FusedAddRmsNormKernel<T, true>
          <<<rs.grid(), threads, 0, stream>>>(x, r, w, rs.hidden, static_cast<float>(eps));
    } else {
      FusedAddRmsNormKernel<T, false>
          <<<rs.grid(), threads, 0, stream>>>(x, r, w, rs.hidden, static_cast<float>(eps));
    }
    CheckLaunch(name);
  });
}

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
