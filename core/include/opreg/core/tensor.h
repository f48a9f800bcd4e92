// Tensor: a strided view (sizes, strides, storage offset, dtype) of a shared Storage.
//
// A Tensor is a handle to a reference-counted TensorImpl. Copying a Tensor copies the handle
// (both refer to the same TensorImpl); views (view, narrow, select, ...) create a new TensorImpl
// over the same Storage. A default-constructed Tensor is undefined: defined() is false and every
// other accessor throws opreg::Error.
//
// Errors: argument errors throw opreg::Error through OPREG_CHECK_* with a message naming the
// method and the argument, e.g. "narrow(): start 5 + length 3 exceeds size 6 of dim 1".
// Dimension / index range errors are kIndex, bad sizes kValue, dtype mismatches kType.
//
// Thread safety: like std::shared_ptr. Handles may be copied and destroyed concurrently (the
// counts are atomic); the metadata of a TensorImpl is immutable after creation; the element data
// is not synchronized: concurrent writes (or a write with a read) to one element race.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "opreg/core/device.h"
#include "opreg/core/dtype.h"
#include "opreg/core/dtype_traits.h"
#include "opreg/core/error.h"
#include "opreg/core/intrusive_ptr.h"
#include "opreg/core/storage.h"

namespace opreg {

// A read-only list of sizes / strides / indices (a braced list `{2, 3}` converts to it).
using IntArrayRef = absl::Span<const int64_t>;
// Inline storage for the sizes and strides of a tensor (no heap allocation up to 6 dims).
using DimVector = absl::InlinedVector<int64_t, 6>;

// The shared state of a tensor. Immutable after construction (views are new TensorImpls), but
// for RecycledTensors, which refills one only while it holds the sole handle.
class TensorImpl : public intrusive_ptr_target {
 public:
  // Checks nothing: callers (the factories, views) validate sizes and strides.
  TensorImpl(Storage storage, DimVector sizes, DimVector strides, int64_t storage_offset,
             DType dtype);
  // The same from spans, with the element count the caller already has (from_blob's one-pass
  // check): no intermediate DimVectors and no second pass over the sizes.
  TensorImpl(Storage storage, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
             DType dtype, int64_t numel);

  const Storage& storage() const { return storage_; }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t storage_offset() const { return storage_offset_; }
  DType dtype() const { return dtype_; }
  int64_t numel() const { return numel_; }
  bool is_contiguous() const { return is_contiguous_; }

 private:
  friend class RecycledTensors;
  friend class RecycleScope;
  // A new layout over a blob from its first element (storage offset 0), checked and taken in one
  // pass, for RecycledTensors, which owns the only handle. Sets `*nbytes` to the bytes the layout
  // reaches. False when sizes and strides differ in length, a size or stride is negative or a
  // figure overflows: the layout is then partly written and the tensor must be refilled before
  // any use (the caller reports the error with from_blob's checks).
  // Inline, defined in recycled_tensors_inl.h (its callers' header).
  inline bool AdoptBlobLayout(IntArrayRef sizes, IntArrayRef strides, DType dtype,
                              size_t* nbytes);

  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_;
  int64_t numel_;
  DType dtype_;
  bool is_contiguous_;
};

class Tensor {
 public:
  Tensor() = default;  // Undefined.
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* unsafe_get_impl() const { return impl_.get(); }
  // Number of Tensor handles sharing this TensorImpl (views have their own TensorImpl; see
  // storage().use_count() for those). 0 when undefined.
  size_t use_count() const { return impl_.use_count(); }

  // ---- Metadata ----
  IntArrayRef sizes() const { return impl().sizes(); }
  IntArrayRef strides() const { return impl().strides(); }
  // Size / stride of dimension `dim`; negative dims count from the end. kIndex error when out of
  // range.
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(impl().sizes().size()); }
  int64_t numel() const { return impl().numel(); }
  DType dtype() const { return impl().dtype(); }
  size_t itemsize() const { return ItemSize(dtype()); }
  Device device() const { return impl().storage().device(); }
  const Storage& storage() const { return impl().storage(); }
  int64_t storage_offset() const { return impl().storage_offset(); }
  // numel() * itemsize(): the bytes of the elements (not of the storage).
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  // Row-major contiguous (size-1 dims and empty tensors ignore strides, as in PyTorch).
  bool is_contiguous() const { return impl().is_contiguous(); }
  bool is_meta() const { return device().is_meta(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }

  // Address of the first element (storage data + offset * itemsize); nullptr for meta tensors.
  void* data_ptr() const;
  // Typed data pointer; kType error when T does not match dtype().
  template <class T>
  T* data_ptr() const {
    OPREG_CHECK_TYPE(kDTypeOf<T> == dtype(), "data_ptr<", DTypeName(kDTypeOf<T>),
                     ">(): tensor has dtype ", DTypeName(dtype()));
    return static_cast<T*>(data_ptr());
  }

  // True when both tensors view the same StorageImpl (false if either is undefined).
  bool is_alias_of(const Tensor& other) const;

  // "Tensor(shape=[2, 3], dtype=f32, device=cpu)"; "Tensor(undefined)" when undefined.
  std::string ToString() const;

  // ---- Views (share storage) ----
  // A view with new sizes; at most one -1 is inferred. kValue error when the sizes do not match
  // numel() or when the layout cannot be viewed without a copy (use contiguous() or reshape()).
  Tensor view(IntArrayRef sizes) const;
  // view() when possible, else a contiguous copy with the new shape.
  Tensor reshape(IntArrayRef sizes) const;
  // Elements [start, start + length) of dimension `dim` (negative start counts from the end).
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  // Removes dimension `dim`, keeping index `index` (negative counts from the end).
  Tensor select(int64_t dim, int64_t index) const;
  // Inserts a size-1 dimension at `dim` in [-dim()-1, dim()].
  Tensor unsqueeze(int64_t dim) const;
  // An arbitrary strided view of the same storage; kValue error when it would read outside it.
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const;

  // ---- Copies ----
  // *this when contiguous, else clone().
  Tensor contiguous() const;
  // A new contiguous tensor with the same values, dtype and device.
  Tensor clone() const;
  // Copies src's values into *this. Shapes must be equal (no broadcasting); strides are
  // arbitrary; dtypes are converted (floats to ints truncate toward zero and saturate, NaN -> 0;
  // anything to bool is != 0). CPU<->CPU any dtypes; CPU<->CUDA and CUDA<->CUDA need a CUDA
  // build and the same dtype with both sides contiguous; meta only checks shapes. Overlapping
  // src and dst are handled as if src were copied first. Returns *this.
  Tensor& copy_(const Tensor& src);
  // Same as copy_ but callable on a const handle (the handle is const, the data is not).
  const Tensor& copy_(const Tensor& src) const;

  // ---- Element access (CPU only; values go through double, meant for tests) ----
  // The only element of a one-element tensor.
  double item() const;
  double at(std::initializer_list<int64_t> index) const;
  void set(std::initializer_list<int64_t> index, double value) const;

 private:
  const TensorImpl& impl() const {
    OPREG_CHECK(impl_, "Tensor is undefined (default-constructed)");
    return *impl_;
  }
  int64_t WrapDim(int64_t dim, const char* method, int64_t ndim) const;
  size_t ElementOffset(std::initializer_list<int64_t> index, const char* method) const;

  intrusive_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

// Row-major contiguous strides for `sizes` (size-0/1 dims get the stride of the next).
DimVector ContiguousStrides(IntArrayRef sizes);
// The product of sizes; kValue error on negative sizes or int64 overflow.
int64_t ComputeNumel(IntArrayRef sizes, const char* method);

}  // namespace opreg
