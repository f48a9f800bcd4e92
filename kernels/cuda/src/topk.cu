// opreg::topk.out on CUDA (see topk.h for the algorithm and its limits).
#include "device_helpers.cuh"
#include "opreg/kernels/cuda/topk.h"

namespace opreg {
namespace kernels {
namespace cuda {
namespace {

using namespace detail;

// True when (av, ai) ranks before (bv, bi): by value (NaN above every number), then lower index.
__device__ __forceinline__ bool Ahead(float av, int64_t ai, float bv, int64_t bi, bool largest) {
  const bool an = av != av;
  const bool bn = bv != bv;
  if (an || bn) {
    if (an && bn) return ai < bi;
    return largest ? an : bn;
  }
  if (av != bv) return largest ? av > bv : av < bv;
  return ai < bi;
}

// A candidate; index -1 means none (ranks after everything).
struct Cand {
  float v;
  int64_t i;
};

__device__ __forceinline__ Cand Better(Cand a, Cand b, bool largest) {
  if (a.i < 0) return b;
  if (b.i < 0) return a;
  return Ahead(a.v, a.i, b.v, b.i, largest) ? a : b;
}

__device__ __forceinline__ Cand WarpBest(Cand c, bool largest) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Cand other{__shfl_xor_sync(0xffffffffu, c.v, o),
               static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(c.i), o))};
    c = Better(c, other, largest);
  }
  return c;
}

// One block per slice: x element j of slice (o, in) is x[o * n * inner + j * inner + in].
template <class T>
__global__ void TopkKernel(const T* __restrict__ x, T* __restrict__ values,
                           int64_t* __restrict__ indices, int64_t n, int64_t inner, int64_t k,
                           bool largest, bool cached) {
  extern __shared__ float cache[];
  __shared__ float warp_v[32];
  __shared__ long long warp_i[32];
  const int64_t slice = blockIdx.x;
  const int64_t o = slice / inner;
  const int64_t in = slice - o * inner;
  const T* xs = x + o * n * inner + in;
  T* vs = values + o * k * inner + in;
  int64_t* is = indices + o * k * inner + in;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int nwarps = blockDim.x >> 5;

  if (cached) {
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) cache[j] = ToFloat(xs[j * inner]);
    __syncthreads();
  }
  Cand prev{0.f, -1};
  for (int64_t r = 0; r < k; ++r) {
    Cand best{0.f, -1};
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const float v = cached ? cache[j] : ToFloat(xs[j * inner]);
      if (prev.i >= 0 && !Ahead(prev.v, prev.i, v, j, largest)) continue;  // Already taken.
      best = Better(best, Cand{v, j}, largest);
    }
    best = WarpBest(best, largest);
    if (lane == 0) {
      warp_v[warp] = best.v;
      warp_i[warp] = best.i;
    }
    __syncthreads();
    best = lane < nwarps ? Cand{warp_v[lane], static_cast<int64_t>(warp_i[lane])} : Cand{0.f, -1};
    best = WarpBest(best, largest);
    __syncthreads();  // warp_v / warp_i are rewritten next round.
    if (threadIdx.x == 0) {
      vs[r * inner] = xs[best.i * inner];  // The original element, bit for bit.
      is[r * inner] = best.i;
    }
    prev = best;
  }
}

}  // namespace

void TopkOut(const Tensor& x, int64_t k, int64_t dim, bool largest, const Tensor& values,
             const Tensor& indices, cudaStream_t stream) {
  const char* name = "topk";
  CheckCudaTensor(x, name, "x");
  CheckCudaTensor(values, name, "values");
  CheckCudaTensor(indices, name, "indices");
  CheckContiguous(x, name, "x");
  CheckContiguous(values, name, "values");
  CheckContiguous(indices, name, "indices");
  CheckSameDType(x, values, name, "x", "values");
  OPREG_CHECK_TYPE(indices.dtype() == DType::kInt64, name, "(): 'indices' must be i64, got ",
                   DTypeName(indices.dtype()));
  OPREG_CHECK_INDEX(x.dim() >= 1 && dim >= -x.dim() && dim < x.dim(), name, "(): dim ", dim,
                    " out of range for a tensor of ", x.dim(), " dims");
  if (dim < 0) dim += x.dim();
  const int64_t n = x.size(dim);
  OPREG_CHECK_VALUE(k >= 0 && k <= n, name, "(): k (", k, ") must be in [0, ", n, "]");
  OPREG_CHECK_NOT_IMPLEMENTED(k <= kTopkMaxK, name,
                              "(): the CUDA kernel selects at most k = ", kTopkMaxK,
                              " elements per slice (one selection round per element); got k = ", k,
                              ". Use the CPU kernel, or sort, for larger k");
  DimVector expected(x.sizes().begin(), x.sizes().end());
  expected[dim] = k;
  OPREG_CHECK_VALUE(
      values.sizes() == IntArrayRef(expected) && indices.sizes() == IntArrayRef(expected), name,
      "(): 'values' and 'indices' must have x's shape with size ", k, " at dim ", dim);
  if (k == 0 || values.numel() == 0) return;
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t slices = x.numel() / n;
  OPREG_CHECK_VALUE(slices <= INT32_MAX, name, "(): too many slices for the CUDA grid: ", slices);
  const bool cached = n <= kTopkSharedMaxN;
  const size_t smem = cached ? static_cast<size_t>(n) * sizeof(float) : 0;
  const int threads = RowBlockThreads(n, 512);
  DispatchFloating(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    TopkKernel<T><<<static_cast<unsigned>(slices), threads, smem, stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(values.data_ptr()),
        static_cast<int64_t*>(indices.data_ptr()), n, inner, k, largest, cached);
    CheckLaunch(name);
  });
}

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
