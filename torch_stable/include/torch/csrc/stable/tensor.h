// opreg::torch_stable: <torch/csrc/stable/tensor.h>. torch::stable::Tensor: a shared owner of an
// AtenTensorHandle with the metadata and data-pointer accessors kernel code uses (torch's
// TensorBase subset). Copies share the handle; the last copy releases it. Every accessor goes
// through the C shim, so this header references no opreg symbol.
//
// Errors: a failed shim call throws std::runtime_error with the runtime's message; a typed data
// pointer of the wrong element type throws naming both types.
// Thread safety: as std::shared_ptr (the tensor's element data is not synchronized).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>  // kernel signatures take std::optional<Tensor>, as with torch's header
#include <string>
#include <type_traits>
#include <vector>

#include "../../headeronly/core/Layout.h"
#include "../../headeronly/core/ScalarType.h"
#include "../../headeronly/util/Exception.h"
#include "../../headeronly/util/HeaderOnlyArrayRef.h"
#include "accelerator.h"
#include "device.h"
#include "macros.h"

namespace torch::stable {

using accelerator::DeviceIndex;
using torch::headeronly::IntHeaderOnlyArrayRef;
using torch::headeronly::Layout;
using torch::headeronly::ScalarType;

class Tensor {
 public:
  // An undefined tensor (defined() is false).
  Tensor() {
    AtenTensorHandle handle = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_new_uninitialized_tensor(&handle));
    ath_ = std::shared_ptr<AtenTensorOpaque>(handle, &Delete);
  }
  // Takes ownership of `ath`.
  explicit Tensor(AtenTensorHandle ath) : ath_(ath, &Delete) {}

  // The handle, borrowed.
  AtenTensorHandle get() const { return ath_.get(); }

  void* data_ptr() const {
    void* p = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_data_ptr(ath_.get(), &p));
    return p;
  }
  void* mutable_data_ptr() const {
    void* p = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(torch_get_mutable_data_ptr(ath_.get(), &p));
    return p;
  }
  const void* const_data_ptr() const {
    const void* p = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(torch_get_const_data_ptr(ath_.get(), &p));
    return p;
  }
  // Typed pointers: T must be the C++ type of scalar_type() (float for Float, c10::Half for
  // Half, uint32_t for UInt32, ...).
  template <class T>
  T* mutable_data_ptr() const {
    CheckElementType<T>();
    return static_cast<T*>(mutable_data_ptr());
  }
  template <class T, std::enable_if_t<!std::is_const_v<T>, int> = 0>
  const T* const_data_ptr() const {
    CheckElementType<T>();
    return static_cast<const T*>(const_data_ptr());
  }

  const Tensor& set_requires_grad(bool requires_grad) const {
    STABLE_TORCH_ERROR_CODE_CHECK(torch_set_requires_grad(ath_.get(), requires_grad));
    return *this;
  }

  int64_t dim() const { return Get(&aoti_torch_get_dim); }
  int64_t numel() const { return Get(&aoti_torch_get_numel); }
  int64_t storage_offset() const { return Get(&aoti_torch_get_storage_offset); }
  IntHeaderOnlyArrayRef sizes() const {
    int64_t* sizes = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_sizes(ath_.get(), &sizes));
    return IntHeaderOnlyArrayRef(sizes, static_cast<size_t>(dim()));
  }
  IntHeaderOnlyArrayRef strides() const {
    int64_t* strides = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_strides(ath_.get(), &strides));
    return IntHeaderOnlyArrayRef(strides, static_cast<size_t>(dim()));
  }
  int64_t size(int64_t d) const {
    int64_t out = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_size(ath_.get(), d, &out));
    return out;
  }
  int64_t stride(int64_t d) const {
    int64_t out = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_stride(ath_.get(), d, &out));
    return out;
  }
  bool is_contiguous() const {
    bool out = false;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_is_contiguous(ath_.get(), &out));
    return out;
  }
  bool defined() const {
    bool out = false;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_is_defined(ath_.get(), &out));
    return out;
  }
  int8_t get_device() const {
    const DeviceIndex index = get_device_index();
    STD_TORCH_CHECK(index >= std::numeric_limits<int8_t>::min() &&
                        index <= std::numeric_limits<int8_t>::max(),
                    "Device index is out of range of return type int8_t, please use "
                    "get_device_index() instead.");
    return static_cast<int8_t>(index);
  }
  DeviceIndex get_device_index() const {
    int32_t out = -1;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_index(ath_.get(), &out));
    return out;
  }
  bool is_cuda() const { return DeviceTypeCode() == aoti_torch_device_type_cuda(); }
  bool is_cpu() const { return DeviceTypeCode() == aoti_torch_device_type_cpu(); }
  size_t element_size() const {
    int32_t dtype = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(ath_.get(), &dtype));
    return aoti_torch_dtype_element_size(dtype);
  }
  ScalarType scalar_type() const {
    int32_t dtype = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(ath_.get(), &dtype));
    return static_cast<ScalarType>(dtype);  // the shim's codes are c10::ScalarType's values
  }
  Device device() const {
    return Device(static_cast<DeviceType>(DeviceTypeCode()), get_device_index());
  }
  Layout layout() const {
    int32_t layout = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_layout(ath_.get(), &layout));
    return static_cast<Layout>(layout);
  }

 private:
  static void Delete(AtenTensorOpaque* handle) { aoti_torch_delete_tensor_object(handle); }

  int64_t Get(AOTITorchError (*getter)(AtenTensorHandle, int64_t*)) const {
    int64_t out = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(getter(ath_.get(), &out));
    return out;
  }
  int32_t DeviceTypeCode() const {
    int32_t out = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(ath_.get(), &out));
    return out;
  }
  template <class T>
  void CheckElementType() const {
    using E = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<E, void>) {
      return;
    } else if constexpr (std::is_same_v<E, int8_t> || std::is_same_v<E, uint8_t>) {
      // int8/uint8 pointers also view the one-byte float8 types, as kernels cast them.
      const ScalarType t = scalar_type();
      STD_TORCH_CHECK(t == torch::headeronly::CppTypeToScalarType<E>::value ||
                          torch::headeronly::elementSize(t) == 1,
                      "expected scalar type ", torch::headeronly::CppTypeToScalarType<E>::value,
                      " but found ", t);
    } else if constexpr (sizeof(E) > 0 && IsKnown<E>(0)) {
      const ScalarType t = scalar_type();
      STD_TORCH_CHECK(t == torch::headeronly::CppTypeToScalarType<E>::value,
                      "expected scalar type ", torch::headeronly::CppTypeToScalarType<E>::value,
                      " but found ", t);
    } else {
      // A type of the kernel's own (fp8 structs, vector types): the element size must match.
      const ScalarType t = scalar_type();
      STD_TORCH_CHECK(torch::headeronly::elementSize(t) == sizeof(E),
                      "expected an element of ", sizeof(E), " bytes but found ", t);
    }
  }
  template <class E>
  static constexpr bool IsKnown(decltype(torch::headeronly::CppTypeToScalarType<E>::value)*) {
    return true;
  }
  template <class E>
  static constexpr bool IsKnown(...) {
    return false;
  }

  std::shared_ptr<AtenTensorOpaque> ath_;
};

}  // namespace torch::stable
