// Tensor metadata: construction of TensorImpl, shape queries, printing.
#include "opreg/core/tensor.h"

#include <limits>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace opreg {
namespace {

bool ComputeIsContiguous(IntArrayRef sizes, IntArrayRef strides, int64_t numel) {
  if (numel == 0) return true;
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;  // A size-1 dim's stride never matters.
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

}  // namespace

TensorImpl::TensorImpl(Storage storage, DimVector sizes, DimVector strides, int64_t storage_offset,
                       DType dtype)
    : storage_(std::move(storage)),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      storage_offset_(storage_offset),
      dtype_(dtype) {
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  is_contiguous_ = ComputeIsContiguous(sizes_, strides_, numel_);
}

TensorImpl::TensorImpl(Storage storage, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset, DType dtype, int64_t numel)
    : storage_(std::move(storage)),
      sizes_(sizes.begin(), sizes.end()),
      strides_(strides.begin(), strides.end()),
      storage_offset_(storage_offset),
      numel_(numel),
      dtype_(dtype),
      is_contiguous_(ComputeIsContiguous(sizes, strides, numel)) {}

DimVector ContiguousStrides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= sizes[d] > 1 ? sizes[d] : 1;
  }
  return strides;
}

int64_t ComputeNumel(IntArrayRef sizes, const char* method) {
  int64_t numel = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    OPREG_CHECK_VALUE(sizes[d] >= 0, method, ": negative size ", sizes[d], " in dim ", d,
                      " of shape [", absl::StrJoin(sizes, ", "), "]");
    OPREG_CHECK_VALUE(sizes[d] == 0 || numel <= std::numeric_limits<int64_t>::max() / sizes[d],
                      method, ": shape [", absl::StrJoin(sizes, ", "),
                      "] has more than 2^63 elements");
    numel *= sizes[d];
  }
  return numel;
}

int64_t Tensor::WrapDim(int64_t dim, const char* method, int64_t ndim) const {
  // `ndim` is the number of valid positions: dim() for most methods, dim() + 1 for unsqueeze.
  OPREG_CHECK_INDEX(ndim > 0, method, ": dimension ", dim,
                    " out of range: the tensor is 0-d (has no dimensions)");
  OPREG_CHECK_INDEX(dim >= -ndim && dim < ndim, method, ": dimension ", dim, " out of range for a ",
                    this->dim(), "-d tensor (expected in [", -ndim, ", ", ndim - 1, "])");
  return dim < 0 ? dim + ndim : dim;
}

int64_t Tensor::size(int64_t dim) const { return sizes()[WrapDim(dim, "size()", this->dim())]; }

int64_t Tensor::stride(int64_t dim) const {
  return strides()[WrapDim(dim, "stride()", this->dim())];
}

void* Tensor::data_ptr() const {
  const TensorImpl& t = impl();
  void* base = t.storage().data();
  if (base == nullptr) return nullptr;
  return static_cast<char*>(base) + t.storage_offset() * static_cast<int64_t>(ItemSize(t.dtype()));
}

bool Tensor::is_alias_of(const Tensor& other) const {
  if (!defined() || !other.defined()) return false;
  return impl_->storage().is_same(other.impl_->storage());
}

std::string Tensor::ToString() const {
  if (!defined()) return "Tensor(undefined)";
  return StrCat("Tensor(shape=[", absl::StrJoin(sizes(), ", "), "], dtype=", DTypeName(dtype()),
                ", device=", device().str(), ")");
}

std::ostream& operator<<(std::ostream& os, const Tensor& tensor) { return os << tensor.ToString(); }

}  // namespace opreg
