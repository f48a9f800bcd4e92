// opreg::per_token_quant.out on CUDA (see per_token_quant.h).
#include <cuda_fp8.h>

#include "device_helpers.cuh"
#include "opreg/kernels/cuda/per_token_quant.h"
#include "row_checks.h"

namespace opreg {
namespace kernels {
namespace cuda {
namespace {

using namespace detail;

struct Int8Quant {
  static constexpr float kQMax = 127.f;
  __device__ __forceinline__ static int8_t Convert(float v) {
    // Round to nearest even, clamp to [-127, 127] (NaN cannot occur: scale > 0 and x finite).
    const float r = fminf(fmaxf(rintf(v), -127.f), 127.f);
    return static_cast<int8_t>(r);
  }
};
struct Fp8Quant {
  static constexpr float kQMax = 448.f;
  __device__ __forceinline__ static uint8_t Convert(float v) {
    return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
  }
};

template <class T, class Q, bool kVectorized>
__global__ void PerTokenQuantKernel(const T* __restrict__ x,
                                    decltype(Q::Convert(0.f))* __restrict__ q,
                                    float* __restrict__ scale, int64_t hidden) {
  const int64_t row = blockIdx.x;
  const T* xr = x + row * hidden;
  auto* qr = q + row * hidden;
  constexpr int V = Vector<T>::kSize;
  const int64_t nvec = kVectorized ? hidden / V : 0;

  float amax = 0.f;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const Vector<T> v = LoadVector(xr + i * V);
#pragma unroll
    for (int j = 0; j < V; ++j) amax = fmaxf(amax, fabsf(ToFloat(v.v[j])));
  }
  for (int64_t i = nvec * V + threadIdx.x; i < hidden; i += blockDim.x) {
    amax = fmaxf(amax, fabsf(ToFloat(xr[i])));
  }
  amax = BlockReduce(amax, MaxOp{}, 0.f);
  const float s = amax / Q::kQMax;
  if (threadIdx.x == 0) scale[row] = s;

  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const Vector<T> v = LoadVector(xr + i * V);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      qr[i * V + j] = s == 0.f ? decltype(Q::Convert(0.f)){0} : Q::Convert(ToFloat(v.v[j]) / s);
    }
  }
  for (int64_t i = nvec * V + threadIdx.x; i < hidden; i += blockDim.x) {
    qr[i] = s == 0.f ? decltype(Q::Convert(0.f)){0} : Q::Convert(ToFloat(xr[i]) / s);
  }
}

template <class T, class Q>
void Launch(const Tensor& x, const Tensor& q, const Tensor& scale, const RowShape& rs,
            cudaStream_t stream) {
  using QT = decltype(Q::Convert(0.f));
  constexpr int V = Vector<T>::kSize;
  const T* px = static_cast<const T*>(x.data_ptr());
  QT* pq = static_cast<QT*>(q.data_ptr());
  float* ps = static_cast<float*>(scale.data_ptr());
  const bool vec = rs.hidden % V == 0 && Aligned16(px);
  const int threads = RowBlockThreads(vec ? rs.hidden / V : rs.hidden);
  if (vec) {
    PerTokenQuantKernel<T, Q, true><<<rs.grid(), threads, 0, stream>>>(px, pq, ps, rs.hidden);
  } else {
    PerTokenQuantKernel<T, Q, false><<<rs.grid(), threads, 0, stream>>>(px, pq, ps, rs.hidden);
  }
}

}  // namespace

void PerTokenQuantOut(const Tensor& x, const Tensor& q, const Tensor& scale, cudaStream_t stream) {
  const char* name = "per_token_quant";
  const RowShape rs = CheckRowOp(x, Tensor(), name);
  CheckCudaTensor(q, name, "q");
  CheckCudaTensor(scale, name, "scale");
  CheckContiguous(q, name, "q");
  CheckContiguous(scale, name, "scale");
  OPREG_CHECK_VALUE(q.sizes() == x.sizes(), name, "(): 'q' must have x's shape");
  OPREG_CHECK_TYPE(q.dtype() == DType::kInt8 || q.dtype() == DType::kFloat8E4M3FN, name,
                   "(): 'q' must be i8 or f8e4m3fn, got ", DTypeName(q.dtype()));
  OPREG_CHECK_TYPE(scale.dtype() == DType::kFloat32, name, "(): 'scale' must be f32, got ",
                   DTypeName(scale.dtype()));
  OPREG_CHECK_VALUE(scale.numel() == rs.rows, name, "(): 'scale' must have ", rs.rows,
                    " elements, got ", scale.numel());
  if (rs.rows == 0) return;
  OPREG_CHECK_VALUE(rs.hidden > 0, name, "(): rows of 0 elements have no scale");
  DispatchFloating(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if (q.dtype() == DType::kInt8) {
      Launch<T, Int8Quant>(x, q, scale, rs, stream);
    } else {
      Launch<T, Fp8Quant>(x, q, scale, rs, stream);
    }
    CheckLaunch(name);
  });
}

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
