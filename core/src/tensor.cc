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

bool TensorImpl::AdoptBlobLayout(IntArrayRef sizes, IntArrayRef strides, DType dtype,
                                 size_t* nbytes) {
  // One loop that checks, copies, measures and tests contiguity: this runs for every framework
  // tensor argument of every call, where from_blob's separate check, copy and contiguity passes
  // cost more than the copy itself. The loop runs in from_blob's order, so a shape whose element
  // count overflows before a zero size is refused here as it is there. A recycled tensor usually
  // gets the rank it had, so the resizes rarely act.
  const size_t n = sizes.size();
  if (strides.size() != n) return false;
  if (sizes_.size() != n) sizes_.resize(n);
  if (strides_.size() != n) strides_.resize(n);
  int64_t* sz = sizes_.data();
  int64_t* st = strides_.data();
  int64_t numel = 1, last = 0;
  // Contiguity front to back: each dim of size > 1 spans exactly the stride of the previous such
  // dim (`outer`), and the last such dim has stride 1 (size-1 dims' strides never matter).
  int64_t outer = -1;
  bool contiguous = true;
  for (size_t d = 0; d < n; ++d) {
    const int64_t size = sizes[d], stride = strides[d];
    int64_t reach = 0;
    if (size < 0 || stride < 0 || __builtin_mul_overflow(numel, size, &numel) ||
        (size != 0 && (__builtin_mul_overflow(size - 1, stride, &reach) ||
                       __builtin_add_overflow(last, reach, &last)))) {
      return false;
    }
    sz[d] = size;
    st[d] = stride;
    if (size != 1) {
      int64_t span = 0;
      if (outer >= 0) {
        contiguous = contiguous && !__builtin_mul_overflow(stride, size, &span) && span == outer;
      }
      outer = stride;
    }
  }
  int64_t bytes = 0;
  if (numel != 0 &&
      __builtin_mul_overflow(last + 1, static_cast<int64_t>(ItemSize(dtype)), &bytes)) {
    return false;
  }
  *nbytes = static_cast<size_t>(bytes);
  storage_offset_ = 0;
  numel_ = numel;
  dtype_ = dtype;
  is_contiguous_ = numel == 0 || (contiguous && (outer == -1 || outer == 1));
  return true;
}

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
