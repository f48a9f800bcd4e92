// opreg::silu_and_mul.out on CUDA (see silu_and_mul.h).
#include "device_helpers.cuh"
#include "opreg/kernels/cuda/silu_and_mul.h"

namespace opreg {
namespace kernels {
namespace cuda {
namespace {

using namespace detail;

__device__ __forceinline__ float SiluMul(float a, float b) { return a / (1.f + expf(-a)) * b; }

// blockIdx.x: row; blockIdx.y: chunk of `chunk` output items (vectors when vectorized).
template <class T, bool kVectorized>
__global__ void SiluAndMulKernel(T* __restrict__ out, const T* __restrict__ x, int64_t d,
                                 int64_t chunk) {
  const int64_t row = blockIdx.x;
  const T* a = x + row * 2 * d;
  const T* b = a + d;
  T* y = out + row * d;
  constexpr int V = kVectorized ? Vector<T>::kSize : 1;
  const int64_t items = (d + V - 1) / V;  // Vectorized: d % V == 0.
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < items ? begin + chunk : items;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    if constexpr (kVectorized) {
      const Vector<T> va = LoadVector(a + i * V);
      const Vector<T> vb = LoadVector(b + i * V);
      Vector<T> r;
#pragma unroll
      for (int j = 0; j < V; ++j)
        r.v[j] = FromFloat<T>(SiluMul(ToFloat(va.v[j]), ToFloat(vb.v[j])));
      StoreVector(y + i * V, r);
    } else {
      y[i] = FromFloat<T>(SiluMul(ToFloat(a[i]), ToFloat(b[i])));
    }
  }
}

}  // namespace

void SiluAndMulOut(const Tensor& x, const Tensor& out, cudaStream_t stream) {
  const char* name = "silu_and_mul";
  CheckCudaTensor(x, name, "x");
  CheckCudaTensor(out, name, "out");
  CheckContiguous(x, name, "x");
  CheckContiguous(out, name, "out");
  CheckSameDType(x, out, name, "x", "out");
  OPREG_CHECK_VALUE(x.dim() >= 1 && x.size(-1) % 2 == 0, name,
                    "(): 'x' must have an even last dim, got ", x.ToString());
  const int64_t d = x.size(-1) / 2;
  OPREG_CHECK_VALUE(out.numel() * 2 == x.numel() && out.dim() == x.dim() && out.size(-1) == d, name,
                    "(): 'out' must have x's shape with last dim ", d);
  if (d == 0 || x.numel() == 0) return;
  const int64_t rows = x.numel() / (2 * d);
  OPREG_CHECK_VALUE(rows <= INT32_MAX, name, "(): too many rows for the CUDA grid: ", rows);
  DispatchFloating(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = Vector<T>::kSize;
    const T* px = static_cast<const T*>(x.data_ptr());
    T* py = static_cast<T*>(out.data_ptr());
    const bool vec = d % V == 0 && Aligned16(px) && Aligned16(py);
    const int64_t items = vec ? d / V : d;
    const int threads = RowBlockThreads(items);
    // Up to 4 threads' worth of items per thread and block, so long rows use several blocks.
    const int64_t chunk = static_cast<int64_t>(threads) * 4;
    const int64_t chunks = (items + chunk - 1) / chunk;
    OPREG_CHECK_VALUE(chunks <= 65535, name, "(): rows of ", d, " outputs are too long");
    const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(chunks));
    if (vec) {
      SiluAndMulKernel<T, true><<<grid, threads, 0, stream>>>(py, px, d, chunk);
    } else {
      SiluAndMulKernel<T, false><<<grid, threads, 0, stream>>>(py, px, d, chunk);
    }
    CheckLaunch(name);
  });
}

}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
