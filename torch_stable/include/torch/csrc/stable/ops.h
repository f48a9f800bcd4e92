// opreg::torch_stable: <torch/csrc/stable/ops.h>. The tensor functions of torch's stable API
// (empty, new_empty, empty_like, new_zeros, view, reshape, narrow, transpose, contiguous, copy_,
// zero_, fill_, to, sum, pad, flatten, from_blob, amax, subtract, matmul, bitwise ops,
// floor_divide, index_select, sort, ...), each one call into the runtime: aten ops
// through torch_call_dispatcher, the rest through their aoti_torch_aten_* functions. Results are
// new tensors (or views, where torch's op returns a view); failures throw std::runtime_error
// with the runtime's message.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../../headeronly/core/Layout.h"
#include "../../headeronly/core/MemoryFormat.h"
#include "../../headeronly/core/ScalarType.h"
#include "../../headeronly/util/HeaderOnlyArrayRef.h"
#include "../inductor/aoti_torch/generated/c_shim_aten.h"
#include "c/shim.h"
#include "device.h"
#include "macros.h"
#include "stableivalue_conversions.h"
#include "tensor.h"
#include "version.h"

namespace torch::stable {

namespace detail {
// Calls aten op `name`.`overload` with `args` boxed; returns the first return slot.
template <size_t N>
StableIValue CallAten(const char* name, const char* overload, std::array<StableIValue, N> stack) {
  STABLE_TORCH_ERROR_CODE_CHECK(
      torch_call_dispatcher(name, overload, stack.data(), TORCH_ABI_VERSION));
  return stack[0];
}
}  // namespace detail

using torch::headeronly::IntHeaderOnlyArrayRef;
using torch::headeronly::Layout;
using torch::headeronly::MemoryFormat;
using torch::headeronly::ScalarType;

inline Tensor empty(IntHeaderOnlyArrayRef size, std::optional<ScalarType> dtype = std::nullopt,
                    std::optional<Layout> layout = std::nullopt,
                    std::optional<Device> device = std::nullopt,
                    std::optional<bool> pin_memory = std::nullopt,
                    std::optional<MemoryFormat> memory_format = std::nullopt) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<6>(
      "aten::empty", "memory_format",
      {from(size), from(dtype), from(layout), from(device), from(pin_memory),
       from(memory_format)}));
}

inline Tensor empty_like(const Tensor& self) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<6>(
      "aten::empty_like", "",
      {from(self), from(std::nullopt), from(std::nullopt), from(std::nullopt),
       from(std::nullopt), from(std::nullopt)}));
}

inline Tensor new_empty(const Tensor& self, IntHeaderOnlyArrayRef size,
                        std::optional<ScalarType> dtype = std::nullopt,
                        std::optional<Layout> layout = std::nullopt,
                        std::optional<Device> device = std::nullopt,
                        std::optional<bool> pin_memory = std::nullopt) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<6>(
      "aten::new_empty", "",
      {from(self), from(size), from(dtype), from(layout), from(device), from(pin_memory)}));
}

inline Tensor new_zeros(const Tensor& self, IntHeaderOnlyArrayRef size,
                        std::optional<ScalarType> dtype = std::nullopt,
                        std::optional<Layout> layout = std::nullopt,
                        std::optional<Device> device = std::nullopt,
                        std::optional<bool> pin_memory = std::nullopt) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<6>(
      "aten::new_zeros", "",
      {from(self), from(size), from(dtype), from(layout), from(device), from(pin_memory)}));
}

inline Tensor full(IntHeaderOnlyArrayRef size, double fill_value,
                   std::optional<ScalarType> dtype = std::nullopt,
                   std::optional<Layout> layout = std::nullopt,
                   std::optional<Device> device = std::nullopt,
                   std::optional<bool> pin_memory = std::nullopt) {
  int32_t dtype_code = dtype ? static_cast<int32_t>(*dtype) : 0;
  int32_t layout_code = layout ? static_cast<int32_t>(*layout) : 0;
  int32_t device_code = device ? static_cast<int32_t>(device->type()) : 0;
  int32_t pin = pin_memory ? static_cast<int32_t>(*pin_memory) : 0;
  AtenTensorHandle ret = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_aten_full(
      size.data(), static_cast<int64_t>(size.size()), fill_value, dtype ? &dtype_code : nullptr,
      layout ? &layout_code : nullptr, device ? &device_code : nullptr,
      device ? device->index() : -1, pin_memory ? &pin : nullptr, &ret));
  return Tensor(ret);
}

inline Tensor fill_(const Tensor& self, double value) {
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_aten_fill__Scalar(self.get(), value));
  return self;
}

inline Tensor zero_(Tensor& self) {
  return detail::to<Tensor>(detail::CallAten<1>("aten::zero_", "", {detail::from(self)}));
}

inline Tensor copy_(Tensor& self, const Tensor& src,
                    std::optional<bool> non_blocking = std::nullopt) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<3>(
      "aten::copy_", "", {from(self), from(src), from(non_blocking.value_or(false))}));
}

inline Tensor clone(const Tensor& self) {
  using detail::from;
  return detail::to<Tensor>(
      detail::CallAten<2>("aten::clone", "", {from(self), from(std::nullopt)}));
}

inline Tensor contiguous(const Tensor& self,
                         MemoryFormat memory_format = MemoryFormat::Contiguous) {
  using detail::from;
  return detail::to<Tensor>(
      detail::CallAten<2>("aten::contiguous", "", {from(self), from(memory_format)}));
}

inline Tensor narrow(Tensor& self, int64_t dim, int64_t start, int64_t length) {
  AtenTensorHandle ret = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_aten_narrow(self.get(), dim, start, length, &ret));
  return Tensor(ret);
}

inline Tensor pad(const Tensor& self, IntHeaderOnlyArrayRef pad,
                  const std::string& mode = "constant", double value = 0.0) {
  AtenTensorHandle ret = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_aten_pad(
      self.get(), pad.data(), static_cast<int64_t>(pad.size()), mode.c_str(), &value, &ret));
  return Tensor(ret);
}

inline Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  using detail::from;
  return detail::to<Tensor>(
      detail::CallAten<3>("aten::transpose", "int", {from(self), from(dim0), from(dim1)}));
}

inline Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<3>("aten::flatten", "using_ints",
                                                {from(self), from(start_dim), from(end_dim)}));
}

inline Tensor unsqueeze(const Tensor& self, int64_t dim) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<2>("aten::unsqueeze", "", {from(self), from(dim)}));
}

inline Tensor squeeze(const Tensor& self, int64_t dim) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<2>("aten::squeeze", "dim", {from(self), from(dim)}));
}

inline Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  using detail::from;
  return detail::to<Tensor>(
      detail::CallAten<3>("aten::select", "int", {from(self), from(dim), from(index)}));
}

inline Tensor permute(const Tensor& self, IntHeaderOnlyArrayRef dims) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<2>("aten::permute", "", {from(self), from(dims)}));
}

inline Tensor reshape(const Tensor& self, IntHeaderOnlyArrayRef shape) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<2>("aten::reshape", "", {from(self), from(shape)}));
}

inline Tensor view(const Tensor& self, IntHeaderOnlyArrayRef size) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<2>("aten::view", "", {from(self), from(size)}));
}

inline Tensor view(const Tensor& self, ScalarType dtype) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<2>("aten::view", "dtype", {from(self), from(dtype)}));
}

inline Tensor to(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt,
                 std::optional<Layout> layout = std::nullopt,
                 std::optional<Device> device = std::nullopt,
                 std::optional<bool> pin_memory = std::nullopt, bool non_blocking = false,
                 bool copy = false, std::optional<MemoryFormat> memory_format = std::nullopt) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<8>(
      "aten::to", "dtype_layout",
      {from(self), from(dtype), from(layout), from(device), from(pin_memory), from(non_blocking),
       from(copy), from(memory_format)}));
}

inline Tensor to(const Tensor& self, Device device, bool non_blocking = false, bool copy = false) {
  return to(self, std::nullopt, std::nullopt, device, std::nullopt, non_blocking, copy);
}

inline Tensor sum(const Tensor& self, std::optional<IntHeaderOnlyArrayRef> dim = std::nullopt,
                  bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  using detail::from;
  return detail::to<Tensor>(detail::CallAten<4>(
      "aten::sum", "dim_IntList", {from(self), from(dim), from(keepdim), from(dtype)}));
}

inline Tensor& sum_out(Tensor& out, const Tensor& self,
                       std::optional<IntHeaderOnlyArrayRef> dim = std::nullopt,
                       bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  using detail::from;
  (void)detail::to<Tensor>(detail::CallAten<5>(
      "aten::sum", "IntList_out", {from(self), from(dim), from(keepdim), from(dtype), from(out)}));
  return out;
}

inline bool is_pinned(const Tensor& self) {
  using detail::from;
  return detail::to<bool>(
      detail::CallAten<2>("aten::is_pinned", "", {from(self), from(std::nullopt)}));
}

// The largest element over `dims` (every dim when empty).
inline Tensor amax(const Tensor& self, IntHeaderOnlyArrayRef dims, bool keepdim = false) {
  AtenTensorHandle ret = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_aten_amax(
      self.get(), dims.data(), static_cast<int64_t>(dims.size()), keepdim, &ret));
  return Tensor(ret);
}

inline Tensor amax(const Tensor& self, int64_t dim, bool keepdim = false) {
  AtenTensorHandle ret = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_aten_amax(self.get(), &dim, 1, keepdim, &ret));
  return Tensor(ret);
}

// self - alpha * other, broadcast, of the promoted dtype.
inline Tensor subtract(const Tensor& self, const Tensor& other, double alpha = 1.0) {
  AtenTensorHandle ret = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(
      aoti_torch_aten_subtract_Tensor(self.get(), other.get(), alpha, &ret));
  return Tensor(ret);
}

namespace detail {
// A (Tensor, Tensor) -> Tensor aten op.
inline Tensor CallBinary(const char* name, const char* overload, const Tensor& self,
                         const Tensor& other) {
  return to<Tensor>(CallAten<2>(name, overload, {from(self), from(other)}));
}
}  // namespace detail

inline Tensor matmul(const Tensor& self, const Tensor& other) {
  return detail::CallBinary("aten::matmul", "", self, other);
}
inline Tensor bitwise_and(const Tensor& self, const Tensor& other) {
  return detail::CallBinary("aten::bitwise_and", "Tensor", self, other);
}
inline Tensor bitwise_or(const Tensor& self, const Tensor& other) {
  return detail::CallBinary("aten::bitwise_or", "Tensor", self, other);
}
inline Tensor bitwise_left_shift(const Tensor& self, const Tensor& other) {
  return detail::CallBinary("aten::bitwise_left_shift", "Tensor", self, other);
}
inline Tensor bitwise_right_shift(const Tensor& self, const Tensor& other) {
  return detail::CallBinary("aten::bitwise_right_shift", "Tensor", self, other);
}
inline Tensor floor_divide(const Tensor& self, const Tensor& other) {
  return detail::CallBinary("aten::floor_divide", "", self, other);
}

inline Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  using detail::from;
  return detail::to<Tensor>(
      detail::CallAten<3>("aten::index_select", "", {from(self), from(dim), from(index)}));
}

// (values, indices) sorted along `dim`.
inline std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1,
                                       bool descending = false) {
  using detail::from;
  std::array<StableIValue, 3> stack{from(self), from(dim), from(descending)};
  STABLE_TORCH_ERROR_CODE_CHECK(
      torch_call_dispatcher("aten::sort", "", stack.data(), TORCH_ABI_VERSION));
  return {detail::to<Tensor>(stack[0]), detail::to<Tensor>(stack[1])};
}

inline std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable,
                                       int64_t dim = -1, bool descending = false) {
  using detail::from;
  std::array<StableIValue, 4> stack{from(self), from(stable), from(dim), from(descending)};
  STABLE_TORCH_ERROR_CODE_CHECK(
      torch_call_dispatcher("aten::sort", "stable", stack.data(), TORCH_ABI_VERSION));
  return {detail::to<Tensor>(stack[0]), detail::to<Tensor>(stack[1])};
}

// A tensor over `data`, which the caller keeps alive.
inline Tensor from_blob(void* data, IntHeaderOnlyArrayRef sizes, IntHeaderOnlyArrayRef strides,
                        Device device, ScalarType dtype, int64_t storage_offset = 0,
                        Layout layout = Layout::Strided) {
  STD_TORCH_CHECK(sizes.size() == strides.size(), "from_blob: sizes and strides differ in length");
  AtenTensorHandle ret = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_create_tensor_from_blob_v2(
      data, static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), storage_offset,
      static_cast<int32_t>(dtype), static_cast<int32_t>(device.type()), device.index(), &ret,
      static_cast<int32_t>(layout), nullptr, 0));
  return Tensor(ret);
}

// A tensor over `data`; `deleter(data)` runs when the last reference is released.
template <class F, std::enable_if_t<std::is_invocable_v<F, void*>, int> = 0>
inline Tensor from_blob(void* data, IntHeaderOnlyArrayRef sizes, IntHeaderOnlyArrayRef strides,
                        Device device, ScalarType dtype, F deleter, int64_t storage_offset = 0,
                        Layout layout = Layout::Strided) {
  STD_TORCH_CHECK(sizes.size() == strides.size(), "from_blob: sizes and strides differ in length");
  auto* ctx = new F(std::move(deleter));
  auto trampoline = [](void* p, void* c) {
    F* f = static_cast<F*>(c);
    (*f)(p);
    delete f;
  };
  AtenTensorHandle ret = nullptr;
  const AOTITorchError err =
      torch_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                      storage_offset, static_cast<int32_t>(dtype),
                      static_cast<int32_t>(device.type()), device.index(), &ret,
                      static_cast<int32_t>(layout), nullptr, 0, trampoline, ctx);
  if (err != AOTI_TORCH_SUCCESS) delete ctx;
  STABLE_TORCH_ERROR_CODE_CHECK(err);
  return Tensor(ret);
}

// at::parallel_for: f(begin, end) on chunks of at least grain_size, across threads.
template <class F>
inline void parallel_for(const int64_t begin, const int64_t end, const int64_t grain_size,
                         const F& f) {
  auto trampoline = [](int64_t b, int64_t e, void* ctx) { (*static_cast<const F*>(ctx))(b, e); };
  void* ctx = const_cast<void*>(static_cast<const void*>(&f));
  STABLE_TORCH_ERROR_CODE_CHECK(torch_parallel_for(begin, end, grain_size, trampoline, ctx));
}

inline uint32_t get_num_threads() {
  uint32_t n = 1;
  STABLE_TORCH_ERROR_CODE_CHECK(torch_get_num_threads(&n));
  return n;
}

}  // namespace torch::stable
