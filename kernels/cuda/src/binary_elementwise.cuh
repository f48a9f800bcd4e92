// Elementwise kernels of two inputs and one or two outputs (add, mul, split_add), private to
// kernels/cuda/src.
//
// Two paths:
//   - contiguous: both inputs and every output are contiguous with the outputs' shape; a
//     grid-stride loop over 16-byte vectors (when every pointer is 16-byte aligned) plus a
//     scalar tail for the last numel % (16 / itemsize) elements;
//   - broadcast: inputs of any strides broadcast to the (contiguous) outputs' shape, up to
//     kMaxDims dims; a grid-stride loop decomposing each output index.
// Functors take and return f32: `void operator()(float a, float b, float* r) const` writing
// kOutputs results.
#pragma once

#include "device_helpers.cuh"

namespace opreg {
namespace kernels {
namespace cuda {
namespace detail {

inline constexpr int kMaxDims = 8;

struct BroadcastIndexer {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t stride_a[kMaxDims];  // Element strides, 0 on broadcast dims.
  int64_t stride_b[kMaxDims];
};

template <class T, int kOutputs, bool kVectorized, class Op>
__global__ void BinaryContiguousKernel(const T* a, const T* b, T* out0, T* out1, int64_t n, Op op) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t done = 0;
  if constexpr (kVectorized) {
    constexpr int V = Vector<T>::kSize;
    const int64_t nvec = n / V;
    for (int64_t i = tid; i < nvec; i += stride) {
      const Vector<T> va = LoadVector(a + i * V);
      const Vector<T> vb = LoadVector(b + i * V);
      Vector<T> r0, r1;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        float r[2];
        op(ToFloat(va.v[j]), ToFloat(vb.v[j]), r);
        r0.v[j] = FromFloat<T>(r[0]);
        if constexpr (kOutputs == 2) r1.v[j] = FromFloat<T>(r[1]);
      }
      StoreVector(out0 + i * V, r0);
      if constexpr (kOutputs == 2) StoreVector(out1 + i * V, r1);
    }
    done = nvec * V;
  }
  for (int64_t i = done + tid; i < n; i += stride) {  // Scalar tail (everything when unvectorized).
    float r[2];
    op(ToFloat(a[i]), ToFloat(b[i]), r);
    out0[i] = FromFloat<T>(r[0]);
    if constexpr (kOutputs == 2) out1[i] = FromFloat<T>(r[1]);
  }
}

template <class T, int kOutputs, class Op>
__global__ void BinaryBroadcastKernel(const T* a, const T* b, T* out0, T* out1, int64_t n,
                                      BroadcastIndexer idx, Op op) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t rem = i;
    int64_t oa = 0;
    int64_t ob = 0;
    for (int d = idx.ndim - 1; d >= 0; --d) {
      const int64_t c = rem % idx.sizes[d];
      rem /= idx.sizes[d];
      oa += c * idx.stride_a[d];
      ob += c * idx.stride_b[d];
    }
    float r[2];
    op(ToFloat(a[oa]), ToFloat(b[ob]), r);
    out0[i] = FromFloat<T>(r[0]);
    if constexpr (kOutputs == 2) out1[i] = FromFloat<T>(r[1]);
  }
}

// Broadcast strides of `t` against `shape` (right-aligned, as in PyTorch); kValue error when the
// shapes do not broadcast.
inline void BroadcastStrides(const Tensor& t, IntArrayRef shape, int64_t* strides, const char* op,
                             const char* name) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  const int64_t td = t.dim();
  OPREG_CHECK_VALUE(td <= nd, op, "(): '", name, "' has ", td, " dims, more than the output's ",
                    nd);
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t k = d - (nd - td);
    if (k < 0) {
      strides[d] = 0;
      continue;
    }
    const int64_t s = t.sizes()[k];
    OPREG_CHECK_VALUE(s == shape[d] || s == 1, op, "(): '", name, "' size ", s, " at dim ", k,
                      " does not broadcast to the output size ", shape[d]);
    strides[d] = s == 1 ? 0 : t.strides()[k];
  }
}

// Runs op over a and b into out0 (and out1 when kOutputs == 2) on `stream`. All tensors on CUDA
// with one floating dtype; outputs contiguous with the broadcast shape.
template <int kOutputs, class Op>
void LaunchBinary(const char* name, const Tensor& a, const Tensor& b, const Tensor& out0,
                  const Tensor* out1, Op op, cudaStream_t stream) {
  CheckCudaTensor(a, name, "self");
  CheckCudaTensor(b, name, "other");
  CheckCudaTensor(out0, name, "out");
  CheckSameDType(a, b, name, "self", "other");
  CheckSameDType(a, out0, name, "self", "out");
  CheckContiguous(out0, name, "out");
  if constexpr (kOutputs == 2) {
    CheckCudaTensor(*out1, name, "out1");
    CheckSameDType(a, *out1, name, "self", "out1");
    CheckContiguous(*out1, name, "out1");
    OPREG_CHECK_VALUE(out1->sizes() == out0.sizes(), name, "(): outputs differ in shape");
  }
  const int64_t n = out0.numel();
  if (n == 0) return;
  constexpr int kThreads = 256;
  const bool same_layout = a.is_contiguous() && b.is_contiguous() && a.sizes() == out0.sizes() &&
                           b.sizes() == out0.sizes();
  DispatchFloating(a.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    const T* pa = static_cast<const T*>(a.data_ptr());
    const T* pb = static_cast<const T*>(b.data_ptr());
    T* p0 = static_cast<T*>(out0.data_ptr());
    T* p1 = kOutputs == 2 ? static_cast<T*>(out1->data_ptr()) : nullptr;
    if (same_layout) {
      const bool vec =
          Aligned16(pa) && Aligned16(pb) && Aligned16(p0) && (kOutputs == 1 || Aligned16(p1));
      constexpr int V = Vector<T>::kSize;
      if (vec) {
        const unsigned blocks = GridStrideBlocks((n + V - 1) / V, kThreads);
        BinaryContiguousKernel<T, kOutputs, true>
            <<<blocks, kThreads, 0, stream>>>(pa, pb, p0, p1, n, op);
      } else {
        const unsigned blocks = GridStrideBlocks(n, kThreads);
        BinaryContiguousKernel<T, kOutputs, false>
            <<<blocks, kThreads, 0, stream>>>(pa, pb, p0, p1, n, op);
      }
    } else {
      BroadcastIndexer idx{};
      const IntArrayRef shape = out0.sizes();
      OPREG_CHECK_NOT_IMPLEMENTED(shape.size() <= static_cast<size_t>(kMaxDims), name,
                                  "(): the CUDA broadcast kernel handles at most ", kMaxDims,
                                  " dims, got ", shape.size());
      idx.ndim = static_cast<int>(shape.size());
      BroadcastStrides(a, shape, idx.stride_a, name, "self");
      BroadcastStrides(b, shape, idx.stride_b, name, "other");
      for (int d = 0; d < idx.ndim; ++d) idx.sizes[d] = shape[d];
      const unsigned blocks = GridStrideBlocks(n, kThreads);
      BinaryBroadcastKernel<T, kOutputs>
          <<<blocks, kThreads, 0, stream>>>(pa, pb, p0, p1, n, idx, op);
    }
    CheckLaunch(name);
  });
}

}  // namespace detail
}  // namespace cuda
}  // namespace kernels
}  // namespace opreg
