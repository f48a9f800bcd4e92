// opreg::rms_norm.out on CUDA (see rms_norm.h).
#include "device_helpers.cuh"
#include "opreg/kernels/cuda/rms_norm.h"
#include "rms_norm_common.cuh"
#include "row_checks.h"

namespace opreg {
namespace kernels {
namespace cuda {
namespace {

using namespace detail;

template <class T, bool kVectorized>
__global__ void RmsNormKernel(T* out, const T* input, const T* __restrict__ weight, int64_t hidden,
                              float eps) {
  const int64_t row = blockIdx.x;
  const T* x = input + row * hidden;
  T* y = out + row * hidden;
  constexpr int V = Vector<T>::kSize;
  const int64_t nvec = kVectorized ? hidden / V : 0;

  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const Vector<T> v = LoadVector(x + i * V);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const float f = ToFloat(v.v[j]);
      ss += f * f;
    }
  }
  for (int64_t i = nvec * V + threadIdx.x; i < hidden; i += blockDim.x) {
    const float f = ToFloat(x[i]);
    ss += f * f;
  }
  ss = BlockReduce(ss, SumOp{}, 0.f);
  const float inv = rsqrtf(ss / static_cast<float>(hidden) + eps);
  ScaleRowByWeight<T, kVectorized>(y, x, weight, hidden, inv);
}

}  // namespace

void RmsNormOut(const Tensor& input, const Tensor& weight, double eps, const Tensor& out,
                cudaStream_t stream) {
  const char* name = "rms_norm";
  const RowShape rs = CheckRowOp(input, weight, name);
  CheckCudaTensor(out, name, "out");
  CheckSameDType(input, out, name, "input", "out");
  CheckContiguous(out, name, "out");
  OPREG_CHECK_VALUE(out.sizes() == input.sizes(), name, "(): 'out' must have input's shape");
  if (rs.rows == 0 || rs.hidden == 0) return;
  DispatchFloating(input.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = Vector<T>::kSize;
    const T* x = static_cast<const T*>(input.data_ptr());
    const T* w = static_cast<const T*>(weight.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    const bool vec = rs.hidden % V == 0 && Aligned16(x) && Aligned16(w) && Aligned16(y);
    const int threads = RowBlockThreads(vec ? rs.hidden / V : rs.hidden);
    if (vec) {
      RmsNormKernel<T, true>
          <<<rs.grid(), threads, 0, stream>>>(y, x, w, rs.hidden, static_cast<float>(eps));
    } else {
      RmsNormKernel<T, false>
          <<<rs.grid(), threads, 0, stream>>>(y, x, w, rs.hidden, static_cast<float>(eps));
    }
    CheckLaunch(name);
  });
}

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
