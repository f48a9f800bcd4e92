// opreg::softmax.out on CUDA (see softmax.h).
#include <cmath>

#include "device_helpers.cuh"
#include "opreg/kernels/cuda/softmax.h"

namespace opreg {
namespace kernels {
namespace cuda {
namespace {

using namespace detail;

// Running (max, sum of exp(x - max)).
struct MaxSum {
  float m;
  float s;
};

__device__ __forceinline__ MaxSum Merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f};  // Both empty (or all -inf so far).
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__device__ __forceinline__ MaxSum Add(MaxSum a, float x) {
  if (x > a.m) return {x, a.s * expf(a.m - x) + 1.f};
  if (x != x) return {x, a.s + 1.f};  // NaN propagates through the max.
  return {a.m, a.s + expf(x - a.m)};
}

__device__ __forceinline__ MaxSum BlockMerge(MaxSum v) {
  __shared__ float sm[32];
  __shared__ float ss[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int nwarps = blockDim.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum other{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = Merge(v, other);
  }
  if (lane == 0) {
    sm[warp] = v.m;
    ss[warp] = v.s;
  }
  __syncthreads();
  v = lane < nwarps ? MaxSum{sm[lane], ss[lane]} : MaxSum{-INFINITY, 0.f};
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum other{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = Merge(v, other);
  }
  return v;
}

template <class T, bool kVectorized>
__global__ void SoftmaxLastDimKernel(T* out, const T* x, int64_t n) {
  const int64_t row = blockIdx.x;
  const T* xr = x + row * n;
  T* yr = out + row * n;
  constexpr int V = Vector<T>::kSize;
  const int64_t nvec = kVectorized ? n / V : 0;
  MaxSum acc{-INFINITY, 0.f};
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const Vector<T> v = LoadVector(xr + i * V);
#pragma unroll
    for (int j = 0; j < V; ++j) acc = Add(acc, ToFloat(v.v[j]));
  }
  for (int64_t i = nvec * V + threadIdx.x; i < n; i += blockDim.x) acc = Add(acc, ToFloat(xr[i]));
  const MaxSum tot = BlockMerge(acc);
  const float inv = 1.f / tot.s;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const Vector<T> v = LoadVector(xr + i * V);
    Vector<T> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = FromFloat<T>(expf(ToFloat(v.v[j]) - tot.m) * inv);
    StoreVector(yr + i * V, r);
  }
  for (int64_t i = nvec * V + threadIdx.x; i < n; i += blockDim.x) {
    yr[i] = FromFloat<T>(expf(ToFloat(xr[i]) - tot.m) * inv);
  }
}

template <class T>
__global__ void SoftmaxInnerKernel(T* out, const T* x, int64_t outer, int64_t n, int64_t inner) {
  const int64_t cols = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += stride) {
    const int64_t o = c / inner;
    const int64_t in = c - o * inner;
    const T* xc = x + o * n * inner + in;
    T* yc = out + o * n * inner + in;
    MaxSum acc{-INFINITY, 0.f};
    for (int64_t j = 0; j < n; ++j) acc = Add(acc, ToFloat(xc[j * inner]));
    const float inv = 1.f / acc.s;
    for (int64_t j = 0; j < n; ++j) {
      yc[j * inner] = FromFloat<T>(expf(ToFloat(xc[j * inner]) - acc.m) * inv);
    }
  }
}

}  // namespace

void SoftmaxOut(const Tensor& x, int64_t dim, const Tensor& out, cudaStream_t stream) {
  const char* name = "softmax";
  CheckCudaTensor(x, name, "x");
  CheckCudaTensor(out, name, "out");
  CheckContiguous(x, name, "x");
  CheckContiguous(out, name, "out");
  CheckSameDType(x, out, name, "x", "out");
  OPREG_CHECK_VALUE(out.sizes() == x.sizes(), name, "(): 'out' must have x's shape");
  OPREG_CHECK_INDEX(x.dim() >= 1 && dim >= -x.dim() && dim < x.dim(), name, "(): dim ", dim,
                    " out of range for a tensor of ", x.dim(), " dims");
  if (dim < 0) dim += x.dim();
  if (x.numel() == 0) return;
  const int64_t n = x.size(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t outer = x.numel() / (n * inner);
  DispatchFloating(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = Vector<T>::kSize;
    const T* px = static_cast<const T*>(x.data_ptr());
    T* py = static_cast<T*>(out.data_ptr());
    if (inner == 1) {
      OPREG_CHECK_VALUE(outer <= INT32_MAX, name, "(): too many rows for the CUDA grid: ", outer);
      const bool vec = n % V == 0 && Aligned16(px) && Aligned16(py);
      const int threads = RowBlockThreads(vec ? n / V : n);
      if (vec) {
        SoftmaxLastDimKernel<T, true>
            <<<static_cast<unsigned>(outer), threads, 0, stream>>>(py, px, n);
      } else {
        SoftmaxLastDimKernel<T, false>
            <<<static_cast<unsigned>(outer), threads, 0, stream>>>(py, px, n);
      }
    } else {
      constexpr int kThreads = 256;
      SoftmaxInnerKernel<T><<<GridStrideBlocks(outer * inner, kThreads), kThreads, 0, stream>>>(
          py, px, outer, n, inner);
    }
    CheckLaunch(name);
  });
}

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
