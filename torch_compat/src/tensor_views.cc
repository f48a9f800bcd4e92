// at::Tensor metadata and views beyond opreg::Tensor's own (slice with a step, transpose,
// permute, expand, squeeze, dtype views): each is an as_strided view of the same storage.
#include <algorithm>
#include <numeric>
#include <sstream>

#include "opreg/core/intrusive_ptr.h"
#include "opreg/torch_compat/tensor.h"
#include "wrap_dim.h"

namespace at {
namespace {

using detail::WrapDim;

::opreg::DimVector Vec(IntArrayRef a) { return ::opreg::DimVector(a.begin(), a.end()); }

}  // namespace

void Tensor::CheckElementType(ScalarType requested, const char* method) const {
  const ScalarType actual = scalar_type();
  TORCH_CHECK_TYPE(requested == actual, "expected scalar type ", requested, " but found ", actual,
                   " (Tensor::", method, "<", requested, ">() of a ", actual, " tensor)");
}

bool Tensor::is_contiguous(MemoryFormat format) const {
  if (format == MemoryFormat::Contiguous || format == MemoryFormat::Preserve) {
    return t_.is_contiguous();
  }
  // Channels-last: the strides of (N, H, W, C) [or (N, D, H, W, C)] contiguous.
  const int64_t want = format == MemoryFormat::ChannelsLast ? 4 : 5;
  if (dim() != want) return false;
  std::vector<int64_t> order = {1};
  for (int64_t d = want - 1; d >= 2; --d) order.push_back(d);
  order.push_back(0);
  int64_t expected = 1;
  for (int64_t d : order) {
    if (size(d) != 1 && stride(d) != expected) return false;
    expected *= size(d);
  }
  return true;
}

bool Tensor::is_non_overlapping_and_dense() const {
  std::vector<int64_t> perm(dim());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return stride(a) < stride(b); });
  int64_t expected = 1;
  for (int64_t d : perm) {
    if (size(d) == 1) continue;
    if (stride(d) != expected) return false;
    expected *= size(d);
  }
  return true;
}

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedTensorImpl";
  std::ostringstream os;
  os << (is_cuda() ? "CUDA" : is_meta() ? "Meta" : "CPU") << c10::toString(scalar_type()) << "Type";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.opreg(); }

Tensor Tensor::view(ScalarType dtype) const {
  const ::opreg::DType d = ToDType(dtype);
  TORCH_CHECK_VALUE(::opreg::ItemSize(d) == t_.itemsize(), "view(", c10::toString(dtype),
                    "): element size ", ::opreg::ItemSize(d), " differs from the tensor's ",
                    t_.itemsize(), " (", c10::toString(scalar_type()), ")");
  return ::opreg::Tensor(::opreg::make_intrusive<::opreg::TensorImpl>(
      t_.storage(), Vec(sizes()), Vec(strides()), storage_offset(), d));
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  const int64_t s = WrapDim(start_dim, dim(), "flatten");
  const int64_t e = WrapDim(end_dim, dim(), "flatten");
  TORCH_CHECK_VALUE(s <= e, "flatten() has invalid args: start_dim cannot come after end_dim");
  std::vector<int64_t> shape(sizes().begin(), sizes().begin() + s);
  int64_t n = 1;
  for (int64_t d = s; d <= e; ++d) n *= size(d);
  shape.push_back(n);
  shape.insert(shape.end(), sizes().begin() + e + 1, sizes().end());
  return reshape(shape);
}

Tensor Tensor::slice(int64_t dim_in, std::optional<int64_t> start_in, std::optional<int64_t> end_in,
                     int64_t step) const {
  const int64_t d = WrapDim(dim_in, dim(), "slice");
  TORCH_CHECK_VALUE(step > 0, "slice step must be positive");
  const int64_t n = size(d);
  int64_t start = start_in.value_or(0);
  int64_t end = end_in.value_or(n);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  ::opreg::DimVector sz = Vec(sizes()), st = Vec(strides());
  sz[d] = (end - start + step - 1) / step;
  st[d] *= step;
  return t_.as_strided(sz, st, storage_offset() + start * stride(d));
}

Tensor Tensor::squeeze(int64_t dim_in) const {
  if (dim() == 0) return *this;
  const int64_t d = WrapDim(dim_in, dim(), "squeeze");
  if (size(d) != 1) return *this;
  ::opreg::DimVector sz = Vec(sizes()), st = Vec(strides());
  sz.erase(sz.begin() + d);
  st.erase(st.begin() + d);
  return t_.as_strided(sz, st, storage_offset());
}

Tensor Tensor::squeeze() const {
  ::opreg::DimVector sz, st;
  for (int64_t d = 0; d < dim(); ++d) {
    if (size(d) == 1) continue;
    sz.push_back(size(d));
    st.push_back(stride(d));
  }
  return t_.as_strided(sz, st, storage_offset());
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  if (dim() == 0) return *this;
  const int64_t a = WrapDim(dim0, dim(), "transpose");
  const int64_t b = WrapDim(dim1, dim(), "transpose");
  ::opreg::DimVector sz = Vec(sizes()), st = Vec(strides());
  std::swap(sz[a], sz[b]);
  std::swap(st[a], st[b]);
  return t_.as_strided(sz, st, storage_offset());
}

Tensor Tensor::t() const {
  TORCH_CHECK_VALUE(dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", dim(),
                    "D");
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  TORCH_CHECK_VALUE(static_cast<int64_t>(dims.size()) == dim(),
                    "permute(sparse_coo): number of dimensions in the tensor input does not "
                    "match the length of the desired ordering of dimensions i.e. input.dim() = ",
                    dim(), " is not equal to len(dims) = ", dims.size());
  ::opreg::DimVector sz, st;
  std::vector<bool> seen(dim(), false);
  for (int64_t d : dims) {
    const int64_t w = WrapDim(d, dim(), "permute");
    TORCH_CHECK_VALUE(!seen[w], "permute(): duplicate dims are not allowed.");
    seen[w] = true;
    sz.push_back(size(w));
    st.push_back(stride(w));
  }
  return t_.as_strided(sz, st, storage_offset());
}

Tensor Tensor::expand(IntArrayRef target) const {
  const int64_t n = static_cast<int64_t>(target.size());
  TORCH_CHECK_VALUE(n >= dim(), "expand(", toString(), "{", sizes(), "}, size=", target,
                    "): the number of sizes provided (", n,
                    ") must be greater or equal to the number of dimensions in the tensor (", dim(),
                    ")");
  ::opreg::DimVector sz(n), st(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t d = i - (n - dim());
    const int64_t have = d >= 0 ? size(d) : 1;
    int64_t want = target[i];
    if (want == -1) {
      TORCH_CHECK_VALUE(d >= 0,
                        "expand(): -1 is not allowed in a leading, non-existing "
                        "dimension ",
                        i);
      want = have;
    }
    if (d >= 0 && have == want) {
      sz[i] = want;
      st[i] = stride(d);
    } else {
      TORCH_CHECK_VALUE(have == 1, "The expanded size of the tensor (", want,
                        ") must match the existing size (", have, ") at non-singleton dimension ",
                        i, ".  Target sizes: ", target, ".  Tensor sizes: ", sizes());
      sz[i] = want;
      st[i] = 0;
    }
  }
  return t_.as_strided(sz, st, storage_offset());
}

Tensor Tensor::as_strided(IntArrayRef sizes_in, IntArrayRef strides_in,
                          std::optional<int64_t> offset) const {
  return t_.as_strided(sizes_in, strides_in, offset.value_or(storage_offset()));
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim_in) const {
  const int64_t d = WrapDim(dim_in, dim(), "split");
  TORCH_CHECK_VALUE(split_size > 0 || size(d) == 0,
                    "split_size can only be 0 if dimension size is 0, but got dimension size of ",
                    size(d));
  std::vector<Tensor> out;
  for (int64_t start = 0; start < size(d); start += split_size) {
    out.push_back(narrow(d, start, std::min(split_size, size(d) - start)));
  }
  if (out.empty()) out.push_back(*this);
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim_in) const {
  TORCH_CHECK_VALUE(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t d = WrapDim(dim_in, dim(), "chunk");
  return split((size(d) + chunks - 1) / chunks, d);
}

std::vector<Tensor> Tensor::unbind(int64_t dim_in) const {
  const int64_t d = WrapDim(dim_in, dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < size(d); ++i) out.push_back(select(d, i));
  return out;
}

Tensor Tensor::contiguous(MemoryFormat format) const {
  TORCH_CHECK_NOT_IMPLEMENTED(
      format == MemoryFormat::Contiguous || format == MemoryFormat::Preserve,
      "contiguous(): only torch.contiguous_format is supported by opreg's torch_compat");
  return t_.contiguous();
}

}  // namespace at
