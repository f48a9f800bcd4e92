// at::Tensor (also torch::Tensor), at::TensorOptions and the tensor factories of libtorch's C++
// API, as far as kernel code uses them, over an opreg::Tensor.
//
// An at::Tensor is a handle to the same reference-counted TensorImpl as the opreg::Tensor it
// wraps (no copy of data or metadata; conversions both ways are free). Views (view, reshape
// when possible, slice, select, narrow, transpose, permute, unsqueeze, squeeze, expand) share
// storage. Compute methods (fill_, zero_, copy_, to, sum, amax, abs, ...) run on the CPU; for
// CUDA tensors they stage through host memory (correct, not fast: kernels do the real work).
// The supported subset is listed in docs/torch_compat.md; a libtorch method outside it that
// kernel code is known to call (matmul, backward, ...) is declared here and fails to compile
// with a message naming it.
//
// Errors: opreg::Error (c10::Error) with torch's kinds: kIndex for bad dims, kValue for bad
// sizes, kType for dtype mismatches (data_ptr<T>() with the wrong T names both types).
//
// Thread safety: as opreg::Tensor (handles are like std::shared_ptr; element data is not
// synchronized).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "opreg/core/scalar.h"
#include "opreg/core/storage.h"
#include "opreg/core/tensor.h"
#include "opreg/torch_compat/array_ref.h"
#include "opreg/torch_compat/device.h"
#include "opreg/torch_compat/macros.h"
#include "opreg/torch_compat/scalar_type.h"

namespace c10 {
using Scalar = ::opreg::Scalar;
// libtorch's spellings and codes (the same codes as opreg::MemoryFormat / opreg::Layout).
enum class MemoryFormat : int8_t {
  Contiguous = 0,
  Preserve = 1,
  ChannelsLast = 2,
  ChannelsLast3d = 3
};
enum class Layout : int8_t { Strided = 0, Sparse = 1, SparseCsr = 2, Mkldnn = 3 };
constexpr Layout kStrided = Layout::Strided;
constexpr Layout kSparse = Layout::Sparse;
template <class... T>
struct OpregTorchCompatUnsupported : std::false_type {};
}  // namespace c10

// Declares a libtorch function that is outside the subset: calling it fails to compile with a
// message naming it (instead of "no member named ...").
#define OPREG_TORCH_COMPAT_UNSUPPORTED(qualified_name, name)                              \
  template <class... OpregArgs>                                                           \
  auto name(OpregArgs&&...) const {                                                       \
    static_assert(::c10::OpregTorchCompatUnsupported<OpregArgs...>::value, qualified_name \
                  " is outside opreg's torch_compat subset (see "                         \
                  "docs/torch_compat.md); compute it in the kernel or call an "           \
                  "opreg op");                                                            \
  }
#define OPREG_TORCH_COMPAT_UNSUPPORTED_FREE(qualified_name, name)                         \
  template <class... OpregArgs>                                                           \
  auto name(OpregArgs&&...) {                                                             \
    static_assert(::c10::OpregTorchCompatUnsupported<OpregArgs...>::value, qualified_name \
                  " is outside opreg's torch_compat subset (see "                         \
                  "docs/torch_compat.md); compute it in the kernel or call an "           \
                  "opreg op");                                                            \
  }

namespace c10 {

// The storage behind a tensor (Tensor::storage()): its bytes and device. A handle: it keeps the
// memory alive like a tensor does.
class Storage {
 public:
  Storage() = default;
  explicit Storage(::opreg::Storage s) : s_(std::move(s)) {}
  size_t nbytes() const { return s_.nbytes(); }
  const void* data() const { return s_.data(); }
  void* mutable_data() const { return s_.data(); }
  Device device() const { return Device(s_.device()); }
  bool is_alias_of(const Storage& other) const { return s_.is_same(other.s_); }
  size_t use_count() const { return s_.use_count(); }

 private:
  ::opreg::Storage s_;
};

// Makes a device current for its scope (CUDA: the device; CPU and meta: nothing), restoring the
// previous one. kNotImplemented for a CUDA device in an opreg built without CUDA.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  void* guard_ = nullptr;  // an opreg::CudaDeviceGuard for CUDA devices
};

// DeviceGuard for a device that may be absent (nullopt: nothing).
class OptionalDeviceGuard {
 public:
  OptionalDeviceGuard() = default;
  explicit OptionalDeviceGuard(std::optional<Device> device) {
    if (device) guard_.emplace(*device);
  }
  void reset_device(Device device) {
    guard_.reset();
    guard_.emplace(device);
  }

 private:
  std::optional<DeviceGuard> guard_;
};

}  // namespace c10

namespace at {

using namespace ::c10;  // NOLINT: libtorch exposes c10's types in at:: as well.

// The dtype / device / layout of new tensors. Unset fields take the defaults (float32, CPU)
// or, in empty_like and friends, the template tensor's. requires_grad(true) and
// pinned_memory(true) are refused by the factories (opreg has no autograd and no pinned pool).
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}               // NOLINT: implicit, as in c10.
  TensorOptions(TypeMeta dtype) : dtype_(dtype.toScalarType()) {}  // NOLINT
  TensorOptions(Device device) : device_(device) {}                // NOLINT
  TensorOptions(DeviceType type) : device_(Device(type)) {}        // NOLINT
  TensorOptions(Layout layout) : layout_(layout) {}                // NOLINT

  TensorOptions dtype(std::optional<ScalarType> t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions dtype(ScalarType t) const { return dtype(std::optional<ScalarType>(t)); }
  TensorOptions dtype(TypeMeta t) const { return dtype(t.toScalarType()); }
  template <class T>
  TensorOptions dtype() const {
    return dtype(CppTypeToScalarType<T>::value);
  }
  TensorOptions device(std::optional<Device> d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions device(DeviceType type, DeviceIndex index = -1) const {
    return device(Device(type, index));
  }
  TensorOptions device_index(DeviceIndex index) const { return device(Device(kCUDA, index)); }
  TensorOptions layout(std::optional<Layout> l) const {
    TensorOptions o = *this;
    o.layout_ = l;
    return o;
  }
  TensorOptions requires_grad(std::optional<bool> r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r.value_or(false);
    return o;
  }
  TensorOptions pinned_memory(std::optional<bool> p) const {
    TensorOptions o = *this;
    o.pinned_memory_ = p.value_or(false);
    return o;
  }
  TensorOptions memory_format(std::optional<MemoryFormat> f) const {
    TensorOptions o = *this;
    o.memory_format_ = f;
    return o;
  }

  TypeMeta dtype() const { return TypeMeta(dtype_.value_or(ScalarType::Float)); }
  Device device() const { return device_.value_or(Device(kCPU)); }
  Layout layout() const { return layout_.value_or(Layout::Strided); }
  bool requires_grad() const { return requires_grad_; }
  bool pinned_memory() const { return pinned_memory_; }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  bool has_layout() const { return layout_.has_value(); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }

  // The fields set in `other` replace these.
  TensorOptions merge_in(const TensorOptions& other) const;

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<Layout> layout_;
  std::optional<MemoryFormat> memory_format_;
  bool requires_grad_ = false;
  bool pinned_memory_ = false;
};
inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
template <class T>
TensorOptions dtype() {
  return TensorOptions(CppTypeToScalarType<T>::value);
}
inline TensorOptions device(Device d) { return TensorOptions(d); }
inline TensorOptions layout(Layout l) { return TensorOptions(l); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
std::ostream& operator<<(std::ostream& os, const TensorOptions& options);

class Tensor {
 public:
  Tensor() = default;
  Tensor(::opreg::Tensor t) : t_(std::move(t)) {}  // NOLINT: implicit, free conversion.

  // The opreg tensor behind this handle (the same TensorImpl).
  const ::opreg::Tensor& opreg() const { return t_; }
  operator const ::opreg::Tensor&() const { return t_; }  // NOLINT

  bool defined() const { return t_.defined(); }
  void reset() { t_ = ::opreg::Tensor(); }
  size_t use_count() const { return t_.use_count(); }
  bool is_same(const Tensor& other) const {
    return t_.unsafe_get_impl() == other.t_.unsafe_get_impl();
  }
  bool is_alias_of(const Tensor& other) const { return t_.is_alias_of(other.t_); }

  // ---- Metadata ----
  int64_t dim() const { return t_.dim(); }
  int64_t ndimension() const { return t_.dim(); }
  int64_t numel() const { return t_.numel(); }
  IntArrayRef sizes() const { return t_.sizes(); }
  IntArrayRef strides() const { return t_.strides(); }
  // Negative dims count from the end; kIndex error out of range.
  int64_t size(int64_t dim) const { return t_.size(dim); }
  int64_t stride(int64_t dim) const { return t_.stride(dim); }
  int64_t storage_offset() const { return t_.storage_offset(); }
  ScalarType scalar_type() const { return FromDType(t_.dtype()); }
  TypeMeta dtype() const { return TypeMeta(scalar_type()); }
  int64_t element_size() const { return static_cast<int64_t>(t_.itemsize()); }
  size_t itemsize() const { return t_.itemsize(); }
  size_t nbytes() const { return t_.nbytes(); }
  Device device() const { return Device(t_.device()); }
  // The CUDA ordinal, or -1 for CPU tensors.
  DeviceIndex get_device() const { return t_.device().index; }
  bool is_cuda() const { return t_.is_cuda(); }
  bool is_cpu() const { return t_.is_cpu(); }
  bool is_meta() const { return t_.is_meta(); }
  bool is_floating_point() const { return isFloatingType(scalar_type()); }
  // Page-locked host memory (asked of the CUDA runtime; false in a build without CUDA).
  bool is_pinned() const;
  Storage storage() const { return Storage(t_.storage()); }
  bool is_complex() const { return false; }
  bool is_sparse() const { return false; }
  bool is_quantized() const { return false; }
  bool requires_grad() const { return false; }
  Layout layout() const { return Layout::Strided; }
  bool is_contiguous(MemoryFormat format = MemoryFormat::Contiguous) const;
  bool is_non_overlapping_and_dense() const;
  TensorOptions options() const { return TensorOptions().dtype(scalar_type()).device(device()); }
  std::string toString() const;

  // ---- Data ----
  void* data_ptr() const { return t_.data_ptr(); }
  const void* const_data_ptr() const { return t_.data_ptr(); }
  void* mutable_data_ptr() const { return t_.data_ptr(); }
  // Typed pointers; kType error naming both types when T is not the tensor's element type.
  template <class T>
  T* data_ptr() const {
    CheckElementType(CppTypeToScalarType<std::remove_cv_t<T>>::value, "data_ptr");
    return static_cast<T*>(t_.data_ptr());
  }
  template <class T>
  const T* const_data_ptr() const {
    CheckElementType(CppTypeToScalarType<std::remove_cv_t<T>>::value, "const_data_ptr");
    return static_cast<const T*>(t_.data_ptr());
  }
  template <class T>
  T* mutable_data_ptr() const {
    CheckElementType(CppTypeToScalarType<std::remove_cv_t<T>>::value, "mutable_data_ptr");
    return static_cast<T*>(t_.data_ptr());
  }
  // The value of a one-element tensor (CPU or CUDA), converted to T.
  template <class T>
  T item() const {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return static_cast<T>(ItemAsInt64());  // exact beyond 2^53
    } else {
      return static_cast<T>(ItemAsDouble());
    }
  }
  Scalar item() const;

  // ---- Views (share storage) ----
  Tensor view(IntArrayRef sizes) const { return t_.view(sizes); }
  Tensor view(ScalarType dtype) const;  // reinterpreting view: element size must match
  Tensor reshape(IntArrayRef sizes) const { return t_.reshape(sizes); }
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  // Elements start, start+step, ... < end of `dim`; start/end clamp like Python slicing.
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const { return t_.select(dim, index); }
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const {
    return t_.narrow(dim, start, length);
  }
  Tensor operator[](int64_t index) const { return select(0, index); }
  // `t[i] = value` (an rvalue view filled, as libtorch's rvalue-only assignment does).
  Tensor& operator=(const Scalar& value) && {
    fill_(value);
    return *this;
  }
  Tensor unsqueeze(int64_t dim) const { return t_.unsqueeze(dim); }
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;

  // ---- Copies and conversions ----
  Tensor contiguous(MemoryFormat format = MemoryFormat::Contiguous) const;
  Tensor clone() const { return t_.clone(); }
  // Copies src into this tensor, broadcasting src to this shape and converting dtypes.
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const {
    return to(other.options(), non_blocking, copy);
  }
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda() const { return to(Device(kCUDA)); }
  Tensor type_as(const Tensor& other) const { return to(other.scalar_type()); }
  Tensor new_empty(IntArrayRef sizes, const TensorOptions& options = {}) const;
  Tensor new_zeros(IntArrayRef sizes, const TensorOptions& options = {}) const;
  Tensor new_ones(IntArrayRef sizes, const TensorOptions& options = {}) const;
  Tensor new_full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options = {}) const;

  // ---- In-place (all return *this) ----
  const Tensor& fill_(const Scalar& value) const;
  const Tensor& zero_() const { return fill_(Scalar(0)); }
  const Tensor& mul_(const Scalar& value) const;
  const Tensor& add_(const Scalar& value) const;
  const Tensor& div_(const Scalar& value) const;
  const Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;

  // ---- Reductions over all elements (0-dim results) and elementwise math ----
  // sum in double for floating types, int64 for integral and bool (torch's promotion).
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  // Sum over `dim` (dims wrap; duplicates are an error), keeping them as size 1 with keepdim.
  Tensor sum(IntArrayRef dim, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean() const;
  Tensor amax() const;
  // The largest element over `dim` (every dim when empty), NaN winning; the dims kept as size 1
  // with keepdim.
  Tensor amax(IntArrayRef dim, bool keepdim = false) const;
  Tensor amin() const;
  // Index (int64) of the largest / smallest element along `dim`, or of the flattened tensor
  // without one; the first on ties, and NaN counts as the largest (libtorch's rule) for both.
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor max() const { return amax(); }
  Tensor min() const { return amin(); }
  Tensor abs() const;
  Tensor neg() const;
  Tensor mul(const Scalar& value) const;
  Tensor add(const Scalar& value) const;
  Tensor div(const Scalar& value) const;
  // Broadcasting binary ops of libtorch (the functions below): promoted result dtype.
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor subtract(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_left_shift(const Tensor& other) const;
  Tensor bitwise_right_shift(const Tensor& other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor matmul(const Tensor& other) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1,
                                  bool descending = false) const;
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08) const;

  // ---- Outside the subset: compile errors that name the method ----
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::backward", backward)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::grad", grad)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::requires_grad_", requires_grad_)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::mm", mm)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::bmm", bmm)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::index", index)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::index_put_", index_put_)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::softmax", softmax)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::topk", topk)
  OPREG_TORCH_COMPAT_UNSUPPORTED("at::Tensor::record_stream", record_stream)

 private:
  void CheckElementType(ScalarType requested, const char* method) const;
  double ItemAsDouble() const;
  int64_t ItemAsInt64() const;

  ::opreg::Tensor t_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

using TensorList = ArrayRef<Tensor>;
inline std::optional<Device> device_of(const Tensor& t) {
  if (!t.defined()) return std::nullopt;
  return t.device();
}
inline std::optional<Device> device_of(const std::optional<Tensor>& t) {
  return t ? device_of(*t) : std::nullopt;
}

// ---- Factories ----
Tensor empty(IntArrayRef sizes, const TensorOptions& options = {},
             std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor zeros(IntArrayRef sizes, const TensorOptions& options = {});
Tensor ones(IntArrayRef sizes, const TensorOptions& options = {});
Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options = {});
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options = {});
// Like `like`: its sizes, and its dtype and device unless `options` sets them.
Tensor empty_like(const Tensor& like, const TensorOptions& options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor zeros_like(const Tensor& like, const TensorOptions& options = {});
Tensor ones_like(const Tensor& like, const TensorOptions& options = {});
Tensor full_like(const Tensor& like, const Scalar& value, const TensorOptions& options = {});
// Wraps memory the caller owns (or hands over through `deleter`); no copy.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& options = {});

// ---- Functions kernel code calls directly ----
Tensor& fill_(Tensor& self, const Scalar& value);
Tensor& zero_(Tensor& self);
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor amax(const Tensor& self);
Tensor abs(const Tensor& self);
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
Tensor& sum_out(Tensor& out, const Tensor& self);
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor& sum_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim = false,
                std::optional<ScalarType> dtype = std::nullopt);
Tensor& amax_out(Tensor& out, const Tensor& self);
Tensor& cat_out(Tensor& out, TensorList tensors, int64_t dim = 0);
// Host-side, like the rest of these (CUDA tensors through host copies), in double for floating
// types and int64 for integral ones, with libtorch's semantics and messages (see
// torch_compat/src/tensor_compute.cc): broadcasting, promoteTypes, shifts past the width,
// Python's floor division, NaN sorted last (first when descending), stable sorts.
Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor subtract(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor bitwise_and(const Tensor& self, const Tensor& other);
Tensor bitwise_or(const Tensor& self, const Tensor& other);
Tensor bitwise_left_shift(const Tensor& self, const Tensor& other);
Tensor bitwise_right_shift(const Tensor& self, const Tensor& other);
Tensor floor_divide(const Tensor& self, const Tensor& other);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
// 1-D and 2-D operands, and batches broadcast over the leading dims (torch.matmul's rules).
Tensor matmul(const Tensor& self, const Tensor& other);
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim = -1,
                                bool descending = false);
bool equal(const Tensor& a, const Tensor& b);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08);

OPREG_TORCH_COMPAT_UNSUPPORTED_FREE("at::mm", mm)
OPREG_TORCH_COMPAT_UNSUPPORTED_FREE("at::bmm", bmm)
OPREG_TORCH_COMPAT_UNSUPPORTED_FREE("at::softmax", softmax)
OPREG_TORCH_COMPAT_UNSUPPORTED_FREE("at::topk", topk)
OPREG_TORCH_COMPAT_UNSUPPORTED_FREE("at::linear", linear)
OPREG_TORCH_COMPAT_UNSUPPORTED_FREE("at::conv2d", conv2d)

}  // namespace at

namespace torch {
using namespace ::at;  // NOLINT: libtorch's torch:: re-exports at:: (torch/types.h).
using Dtype = ::at::ScalarType;
}  // namespace torch
