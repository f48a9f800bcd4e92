// AtenTensorHandle over opreg: a handle is a heap-allocated opreg::Tensor (one reference to its
// TensorImpl), as torch's is a heap-allocated at::Tensor. NewHandle hands one out; the owner
// releases it with aoti_torch_delete_tensor_object.
#pragma once

#include <utility>

#include "../include/torch/csrc/inductor/aoti_torch/c/macros.h"
#include "opreg/core/error.h"
#include "opreg/core/tensor.h"

namespace opreg::torch_stable {

inline Tensor& TensorOf(AtenTensorHandle handle, const char* what = "tensor") {
  OPREG_CHECK_VALUE(handle != nullptr, "expected a tensor handle for ", what, ", got nullptr");
  return *reinterpret_cast<Tensor*>(handle);
}

inline AtenTensorHandle NewHandle(Tensor tensor) {
  return reinterpret_cast<AtenTensorHandle>(new Tensor(std::move(tensor)));
}

// Takes the tensor out of an owned handle and releases the handle.
inline Tensor TakeHandle(AtenTensorHandle handle, const char* what = "tensor") {
  Tensor t = std::move(TensorOf(handle, what));
  delete reinterpret_cast<Tensor*>(handle);
  return t;
}

template <class T>
void CheckOut(T* out, const char* what) {
  OPREG_CHECK_VALUE(out != nullptr, "expected a result pointer for ", what, ", got nullptr");
}

}  // namespace opreg::torch_stable
