// The tensor functions of the stable C ABI over opreg::Tensor: handles, metadata, factories,
// copies. Each runs under ShimGuard, so a bad argument is an AOTI_TORCH_FAILURE whose message
// names the function and the argument (torch_exception_get_what), never a crash.
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "../include/torch/csrc/inductor/aoti_torch/c/shim.h"
#include "../include/torch/csrc/stable/c/shim.h"
#include "codes.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/torch_compat/tensor.h"
#include "shim_guard.h"
#include "tensor_handle.h"

namespace opreg::torch_stable {
namespace {

IntArrayRef Dims(const int64_t* ptr, int64_t ndim, const char* what) {
  OPREG_CHECK_VALUE(ndim >= 0, what, ": expected ndim >= 0, got ", ndim);
  OPREG_CHECK_VALUE(ndim == 0 || ptr != nullptr, what, ": expected ", ndim, " values, got nullptr");
  return IntArrayRef(ptr, static_cast<size_t>(ndim));
}

// A tensor over caller-owned memory with a storage offset (in elements), as torch's from_blob.
Tensor FromBlob(void* data, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                int64_t storage_offset, int32_t dtype, int32_t device_type, int32_t device_index,
                int32_t layout, std::function<void(void*)> deleter, const char* what) {
  OPREG_CHECK_VALUE(layout == kTorchStrided, what, ": expected the strided layout (0), got ",
                    layout);
  OPREG_CHECK_VALUE(storage_offset >= 0, what, ": expected storage_offset >= 0, got ",
                    storage_offset);
  const DType d = DTypeFromCode(dtype, what);
  const Device device = DeviceFromCodes(device_type, device_index, what);
  const IntArrayRef size_ref = Dims(sizes, ndim, what);
  const IntArrayRef stride_ref = Dims(strides, ndim, what);
  OPREG_CHECK_VALUE(data != nullptr || ComputeNumel(size_ref, what) == 0 || device.is_meta(), what,
                    ": expected a data pointer, got nullptr");
  // The offset moves the first element: opreg's blob starts at it (the storage then begins at
  // the first element, which is what a kernel reads).
  char* first = static_cast<char*>(data);
  if (first != nullptr) first += storage_offset * static_cast<int64_t>(ItemSize(d));
  if (deleter) {
    return opreg::from_blob(first, size_ref, stride_ref, d, device,
                            [data, deleter = std::move(deleter)](void*) { deleter(data); });
  }
  return opreg::from_blob(first, size_ref, stride_ref, d, device);
}

template <class T>
void Item(AtenTensorHandle tensor, T* ret, const char* what) {
  CheckOut(ret, what);
  const Tensor& t = TensorOf(tensor, what);
  OPREG_CHECK_VALUE(t.numel() == 1, what, ": expected a tensor with one element, got ", t.numel());
  // item() reads host memory: a CUDA (or meta) tensor's element is copied to the CPU first.
  *ret = static_cast<T>(t.is_cpu() ? t.item() : at::Tensor(t).cpu().opreg().item());
}

}  // namespace

// The shape of every metadata getter: check the out pointer, read one fact of the tensor.
template <class T, class Read>
AOTITorchError Getter(const char* function, AtenTensorHandle tensor, T* ret, const char* ret_name,
                      Read read) {
  return ShimGuard(function, [&] {
    CheckOut(ret, ret_name);
    *ret = read(TensorOf(tensor));
  });
}

}  // namespace opreg::torch_stable

using opreg::Tensor;
using opreg::torch_stable::CheckOut;
using opreg::torch_stable::Getter;
using opreg::torch_stable::NewHandle;
using opreg::torch_stable::ShimGuard;
using opreg::torch_stable::TensorOf;

extern "C" {

AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor) {
  return ShimGuard(__func__, [&] { delete reinterpret_cast<Tensor*>(tensor); });
}

AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle,
                                            AtenTensorHandle* new_handle) {
  return ShimGuard(__func__, [&] {
    CheckOut(new_handle, "new_handle");
    *new_handle = NewHandle(TensorOf(orig_handle, "orig_handle"));
  });
}

AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle* ret) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret, "ret");
    *ret = NewHandle(Tensor());
  });
}

AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_data_ptr, "ret_data_ptr");
    *ret_data_ptr = TensorOf(tensor).data_ptr();
  });
}

AOTITorchError torch_get_mutable_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr) {
  return aoti_torch_get_data_ptr(tensor, ret_data_ptr);
}

AOTITorchError torch_get_const_data_ptr(AtenTensorHandle tensor, const void** ret_data_ptr) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_data_ptr, "ret_data_ptr");
    *ret_data_ptr = TensorOf(tensor).data_ptr();
  });
}

// Bytes of the storage from the tensor's first element (opreg's storages begin at a view's
// base, which from_blob places at the first element).
AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor, int64_t* ret_size) {
  return Getter(__func__, tensor, ret_size, "ret_size",
                [](const Tensor& t) { return static_cast<int64_t>(t.storage().nbytes()); });
}

AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor, int64_t* ret_numel) {
  return Getter(__func__, tensor, ret_numel, "ret_numel", [](const Tensor& t) {
    return static_cast<int64_t>(t.storage().nbytes() / t.itemsize());
  });
}

AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret_dim) {
  return Getter(__func__, tensor, ret_dim, "ret_dim", [](const Tensor& t) { return t.dim(); });
}

AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret_numel) {
  return Getter(__func__, tensor, ret_numel, "ret_numel",
                [](const Tensor& t) { return t.numel(); });
}

AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret_sizes) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_sizes, "ret_sizes");
    *ret_sizes = const_cast<int64_t*>(TensorOf(tensor).sizes().data());
  });
}

AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d, int64_t* ret_size) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_size, "ret_size");
    *ret_size = TensorOf(tensor).size(d);
  });
}

AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret_strides) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_strides, "ret_strides");
    *ret_strides = const_cast<int64_t*>(TensorOf(tensor).strides().data());
  });
}

AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d, int64_t* ret_stride) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_stride, "ret_stride");
    *ret_stride = TensorOf(tensor).stride(d);
  });
}

AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret_dtype) {
  return Getter(__func__, tensor, ret_dtype, "ret_dtype",
                [](const Tensor& t) { return opreg::TorchScalarTypeCode(t.dtype()); });
}

AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret_device_type) {
  return Getter(__func__, tensor, ret_device_type, "ret_device_type",
                [](const Tensor& t) { return opreg::torch_stable::DeviceTypeCode(t.device()); });
}

AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret_device_index) {
  return Getter(__func__, tensor, ret_device_index, "ret_device_index",
                [](const Tensor& t) { return opreg::torch_stable::DeviceIndexOf(t.device()); });
}

AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret_layout) {
  // Every opreg tensor is strided (Getter still refuses a null handle).
  return Getter(__func__, tensor, ret_layout, "ret_layout",
                [](const Tensor&) { return opreg::torch_stable::kTorchStrided; });
}

// opreg's storages begin at the base of the tensor that allocated them, so a view's offset is its
// distance from that base.
AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor, int64_t* ret_storage_offset) {
  return Getter(__func__, tensor, ret_storage_offset, "ret_storage_offset",
                [](const Tensor& t) { return t.storage_offset(); });
}

AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret_is_contiguous) {
  return Getter(__func__, tensor, ret_is_contiguous, "ret_is_contiguous",
                [](const Tensor& t) { return t.is_contiguous(); });
}

AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret_is_defined) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_is_defined, "ret_is_defined");
    *ret_is_defined = tensor != nullptr && TensorOf(tensor).defined();
  });
}

AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr,
                                        const int64_t* strides_ptr, int32_t dtype,
                                        int32_t device_type, int32_t device_index,
                                        AtenTensorHandle* ret_new_tensor) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_new_tensor, "ret_new_tensor");
    using namespace opreg::torch_stable;
    const char* what = "aoti_torch_empty_strided";
    *ret_new_tensor = NewHandle(opreg::empty_strided(
        Dims(sizes_ptr, ndim, what), Dims(strides_ptr, ndim, what), DTypeFromCode(dtype, what),
        DeviceFromCodes(device_type, device_index, what)));
  });
}

AOTITorchError aoti_torch_as_strided(AtenTensorHandle self, const int64_t* sizes_ptr,
                                     const int64_t* strides_ptr, AtenTensorHandle* ret) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret, "ret");
    const Tensor& t = TensorOf(self, "self");
    const int64_t ndim = t.dim();
    *ret = NewHandle(t.as_strided(opreg::torch_stable::Dims(sizes_ptr, ndim, "sizes"),
                                  opreg::torch_stable::Dims(strides_ptr, ndim, "strides"),
                                  t.storage_offset()));
  });
}

AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim,
                                              const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                              int64_t storage_offset,
                                              AtenTensorHandle* ret_new_tensor) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_new_tensor, "ret_new_tensor");
    *ret_new_tensor = NewHandle(
        TensorOf(self, "self")
            .as_strided(opreg::torch_stable::Dims(sizes_ptr, ndim, "sizes"),
                        opreg::torch_stable::Dims(strides_ptr, ndim, "strides"), storage_offset));
  });
}

AOTITorchError aoti_torch_create_tensor_from_blob(void* data, int64_t ndim,
                                                  const int64_t* sizes_ptr,
                                                  const int64_t* strides_ptr,
                                                  int64_t storage_offset, int32_t dtype,
                                                  int32_t device_type, int32_t device_index,
                                                  AtenTensorHandle* ret) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret, "ret");
    *ret = NewHandle(opreg::torch_stable::FromBlob(data, ndim, sizes_ptr, strides_ptr,
                                                   storage_offset, dtype, device_type, device_index,
                                                   0, {}, "from_blob"));
  });
}

AOTITorchError aoti_torch_create_tensor_from_blob_v2(
    void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
    int64_t storage_offset, int32_t dtype, int32_t device_type, int32_t device_index,
    AtenTensorHandle* ret, int32_t layout, const uint8_t* opaque_metadata,
    int64_t opaque_metadata_size) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret, "ret");
    OPREG_CHECK_VALUE(opaque_metadata_size == 0 || opaque_metadata == nullptr,
                      "from_blob: opaque metadata (MKL-DNN tensors) is not supported");
    *ret = NewHandle(opreg::torch_stable::FromBlob(data, ndim, sizes_ptr, strides_ptr,
                                                   storage_offset, dtype, device_type, device_index,
                                                   layout, {}, "from_blob"));
  });
}

AOTITorchError torch_from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr,
                               const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
                               int32_t device_type, int32_t device_index, AtenTensorHandle* ret,
                               int32_t layout, const uint8_t* opaque_metadata,
                               int64_t opaque_metadata_size, void (*deleter)(void* data, void* ctx),
                               void* deleter_ctx) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret, "ret");
    OPREG_CHECK_VALUE(opaque_metadata_size == 0 || opaque_metadata == nullptr,
                      "from_blob: opaque metadata (MKL-DNN tensors) is not supported");
    std::function<void(void*)> release;
    if (deleter != nullptr) {
      release = [deleter, deleter_ctx](void* p) { deleter(p, deleter_ctx); };
    }
    *ret = NewHandle(opreg::torch_stable::FromBlob(data, ndim, sizes_ptr, strides_ptr,
                                                   storage_offset, dtype, device_type, device_index,
                                                   layout, std::move(release), "from_blob"));
  });
}

AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking) {
  return ShimGuard(__func__, [&] {
    at::Tensor dst(TensorOf(self, "self"));
    dst.copy_(at::Tensor(TensorOf(src, "src")), non_blocking != 0);
  });
}

AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret, "ret");
    *ret = NewHandle(TensorOf(self, "self").clone());
  });
}

AOTITorchError aoti_torch_zero_(AtenTensorHandle self) {
  return ShimGuard(__func__, [&] { at::Tensor(TensorOf(self, "self")).zero_(); });
}

AOTITorchError aoti_torch_item_float32(AtenTensorHandle tensor, float* ret_value) {
  return ShimGuard(__func__, [&] { opreg::torch_stable::Item(tensor, ret_value, "item"); });
}
AOTITorchError aoti_torch_item_float64(AtenTensorHandle tensor, double* ret_value) {
  return ShimGuard(__func__, [&] { opreg::torch_stable::Item(tensor, ret_value, "item"); });
}
AOTITorchError aoti_torch_item_int32(AtenTensorHandle tensor, int32_t* ret_value) {
  return ShimGuard(__func__, [&] { opreg::torch_stable::Item(tensor, ret_value, "item"); });
}
AOTITorchError aoti_torch_item_int64(AtenTensorHandle tensor, int64_t* ret_value) {
  return ShimGuard(__func__, [&] { opreg::torch_stable::Item(tensor, ret_value, "item"); });
}
AOTITorchError aoti_torch_item_bool(AtenTensorHandle tensor, bool* ret_value) {
  return ShimGuard(__func__, [&] {
    double v = 0;
    opreg::torch_stable::Item(tensor, &v, "item");
    CheckOut(ret_value, "ret_value");
    *ret_value = v != 0;
  });
}

// opreg tensors carry no autograd state: asking for gradients is refused, clearing is a no-op.
AOTITorchError torch_set_requires_grad(AtenTensorHandle tensor, bool requires_grad) {
  return ShimGuard(__func__, [&] {
    (void)TensorOf(tensor);
    OPREG_CHECK_NOT_IMPLEMENTED(!requires_grad,
                                "set_requires_grad(true): opreg tensors have no autograd; "
                                "register a backward through opreg.torch / torch.library");
  });
}

bool aoti_torch_grad_mode_is_enabled() { return false; }
void aoti_torch_grad_mode_set_enabled(bool) {}

}  // extern "C"
