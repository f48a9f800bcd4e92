// Host staging for torch_compat's compute functions (tensor_math.cc, tensor_compute.cc): they
// compute on the CPU, so CUDA tensors go through host copies. Internal to torch_compat.
#pragma once

#include "opreg/core/tensor_factories.h"

namespace at::detail {

// A CPU tensor with t's values, sizes and dtype (t itself when already on the CPU).
inline ::opreg::Tensor OnHost(const ::opreg::Tensor& t) {
  if (!t.is_cuda()) return t;
  ::opreg::Tensor host = ::opreg::empty(t.sizes(), t.dtype());
  host.copy_(t.contiguous());
  return host;
}

// dst <- src for any pair of devices and dtypes (same shapes): CUDA sides go through host
// copies of their own dtype, since opreg's copy_ converts dtypes on the CPU only.
inline void StageCopy(const ::opreg::Tensor& dst, const ::opreg::Tensor& src) {
  if (!dst.is_cuda() && !src.is_cuda()) {
    dst.copy_(src);
    return;
  }
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    dst.copy_(src);
    return;
  }
  ::opreg::Tensor converted = ::opreg::empty(dst.sizes(), dst.dtype());
  converted.copy_(OnHost(src));
  if (dst.is_cuda() && !dst.is_contiguous()) {
    ::opreg::Tensor host = OnHost(dst);
    host.copy_(converted);
    converted = host;
  }
  dst.copy_(converted);
}

}  // namespace at::detail
