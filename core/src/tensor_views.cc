// View operations: new TensorImpls over the same Storage (view, reshape, narrow, select,
// unsqueeze, as_strided) and contiguous().
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "opreg/core/tensor.h"

namespace opreg {
namespace {

Tensor MakeView(const Tensor& base, DimVector sizes, DimVector strides, int64_t offset) {
  return Tensor(make_intrusive<TensorImpl>(base.storage(), std::move(sizes), std::move(strides),
                                           offset, base.dtype()));
}

std::string Shape(IntArrayRef sizes) { return StrCat("[", absl::StrJoin(sizes, ", "), "]"); }

// Resolves at most one -1 in `sizes` against `numel`.
DimVector InferSize(IntArrayRef sizes, int64_t numel, const char* method) {
  DimVector result(sizes.begin(), sizes.end());
  std::optional<size_t> infer;
  int64_t known = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == -1) {
      OPREG_CHECK_VALUE(!infer.has_value(), method,
                        ": only one dimension can be inferred (-1), got shape ", Shape(sizes));
      infer = d;
    } else {
      OPREG_CHECK_VALUE(sizes[d] >= 0, method, ": invalid size ", sizes[d], " in dim ", d,
                        " of shape ", Shape(sizes));
      known *= sizes[d];
    }
  }
  if (infer) {
    OPREG_CHECK_VALUE(known != 0, method, ": cannot infer the -1 in shape ", Shape(sizes),
                      " for a tensor of ", numel, " elements (any size would do)");
    OPREG_CHECK_VALUE(numel % known == 0, method, ": shape ", Shape(sizes),
                      " is invalid for input of size ", numel);
    result[*infer] = numel / known;
  } else {
    OPREG_CHECK_VALUE(known == numel, method, ": shape ", Shape(sizes),
                      " is invalid for input of size ", numel);
  }
  return result;
}

// PyTorch's computeStride (aten/src/ATen/TensorUtils.cpp): the strides that let `new_sizes`
// view memory laid out as (old_sizes, old_strides), or nullopt when some new dimension would
// have to span two non-contiguous chunks of the old layout.
std::optional<DimVector> ComputeViewStrides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                            IntArrayRef new_sizes, int64_t numel) {
  DimVector new_strides(new_sizes.size());
  if (old_sizes.empty()) {  // A 0-d tensor: every size is 1.
    for (auto& s : new_strides) s = 1;
    return new_strides;
  }
  if (numel == 0) {
    if (old_sizes == new_sizes) return DimVector(old_strides.begin(), old_strides.end());
    return ContiguousStrides(new_sizes);
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    // A chunk ends where the next-outer dim is not laid out right after this one.
    if (tensor_d == 0 || (old_sizes[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

}  // namespace

Tensor Tensor::view(IntArrayRef sizes) const {
  DimVector new_sizes = InferSize(sizes, numel(), "view()");
  std::optional<DimVector> strides =
      ComputeViewStrides(this->sizes(), this->strides(), new_sizes, numel());
  OPREG_CHECK_VALUE(strides.has_value(), "view(): shape ", Shape(new_sizes),
                    " is not compatible with the input's sizes ", Shape(this->sizes()),
                    " and strides ", Shape(this->strides()),
                    " (a dimension would span non-contiguous memory); call contiguous() first, "
                    "or use reshape()");
  return MakeView(*this, std::move(new_sizes), std::move(*strides), storage_offset());
}

Tensor Tensor::reshape(IntArrayRef sizes) const {
  DimVector new_sizes = InferSize(sizes, numel(), "reshape()");
  std::optional<DimVector> strides =
      ComputeViewStrides(this->sizes(), this->strides(), new_sizes, numel());
  if (strides) return MakeView(*this, std::move(new_sizes), std::move(*strides), storage_offset());
  return clone().view(new_sizes);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  const int64_t d = WrapDim(dim, "narrow()", this->dim());
  const int64_t size = sizes()[d];
  OPREG_CHECK_VALUE(length >= 0, "narrow(): length must be non-negative, got ", length);
  OPREG_CHECK_INDEX(start >= -size && start <= size, "narrow(): start ", start,
                    " out of range for dim ", d, " of size ", size, " (expected in [", -size, ", ",
                    size, "])");
  if (start < 0) start += size;
  OPREG_CHECK_INDEX(start + length <= size, "narrow(): start ", start, " + length ", length,
                    " exceeds size ", size, " of dim ", d);
  DimVector new_sizes(sizes().begin(), sizes().end());
  new_sizes[d] = length;
  return MakeView(*this, std::move(new_sizes), DimVector(strides().begin(), strides().end()),
                  storage_offset() + start * strides()[d]);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  const int64_t d = WrapDim(dim, "select()", this->dim());
  const int64_t size = sizes()[d];
  OPREG_CHECK_INDEX(index >= -size && index < size, "select(): index ", index,
                    " out of range for dim ", d, " of size ", size);
  if (index < 0) index += size;
  DimVector new_sizes(sizes().begin(), sizes().end());
  DimVector new_strides(strides().begin(), strides().end());
  new_sizes.erase(new_sizes.begin() + d);
  new_strides.erase(new_strides.begin() + d);
  return MakeView(*this, std::move(new_sizes), std::move(new_strides),
                  storage_offset() + index * strides()[d]);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  const int64_t d = WrapDim(dim, "unsqueeze()", this->dim() + 1);
  DimVector new_sizes(sizes().begin(), sizes().end());
  DimVector new_strides(strides().begin(), strides().end());
  // PyTorch's choice: the new dim's stride is what a contiguous tensor would have there.
  const int64_t stride = d >= this->dim() ? 1 : sizes()[d] * strides()[d];
  new_sizes.insert(new_sizes.begin() + d, 1);
  new_strides.insert(new_strides.begin() + d, stride);
  return MakeView(*this, std::move(new_sizes), std::move(new_strides), storage_offset());
}

Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const {
  OPREG_CHECK_VALUE(sizes.size() == strides.size(), "as_strided(): got ", sizes.size(),
                    " sizes but ", strides.size(), " strides");
  OPREG_CHECK_VALUE(storage_offset >= 0, "as_strided(): storage_offset must be non-negative, got ",
                    storage_offset);
  const int64_t n = ComputeNumel(sizes, "as_strided()");
  int64_t last = storage_offset;  // Largest element offset reached.
  for (size_t d = 0; d < sizes.size(); ++d) {
    OPREG_CHECK_VALUE(strides[d] >= 0, "as_strided(): negative stride ", strides[d], " in dim ", d,
                      " is not supported");
    if (sizes[d] > 0) last += (sizes[d] - 1) * strides[d];
  }
  if (n > 0) {
    const int64_t needed = (last + 1) * static_cast<int64_t>(itemsize());
    OPREG_CHECK_VALUE(needed <= static_cast<int64_t>(storage().nbytes()), "as_strided(): sizes ",
                      Shape(sizes), ", strides ", Shape(strides), " and offset ", storage_offset,
                      " need a storage of at least ", needed, " bytes, but it has ",
                      storage().nbytes());
  }
  return MakeView(*this, DimVector(sizes.begin(), sizes.end()),
                  DimVector(strides.begin(), strides.end()), storage_offset);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

}  // namespace opreg
