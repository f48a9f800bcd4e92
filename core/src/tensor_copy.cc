// Tensor::copy_ and clone(): strided, dtype-converting copies.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "element_convert.h"
#include "opreg/core/allocator.h"
#include "opreg/core/tensor.h"
#include "opreg/core/tensor_factories.h"

namespace opreg {
namespace {

std::string Shape(IntArrayRef sizes) { return StrCat("[", absl::StrJoin(sizes, ", "), "]"); }

// Copies with conversion over an arbitrary strided layout: the innermost dim is a tight loop, the
// outer dims advance an odometer.
template <class Dst, class Src>
void StridedConvert(Dst* dst, IntArrayRef dst_strides, const Src* src, IntArrayRef src_strides,
                    IntArrayRef sizes) {
  const size_t ndim = sizes.size();
  if (ndim == 0) {
    *dst = internal::ConvertElement<Dst>(*src);
    return;
  }
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  const int64_t inner = sizes[ndim - 1];
  const int64_t ds = dst_strides[ndim - 1];
  const int64_t ss = src_strides[ndim - 1];
  DimVector counter(ndim - 1, 0);
  int64_t doff = 0;
  int64_t soff = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) {
      dst[doff + i * ds] = internal::ConvertElement<Dst>(src[soff + i * ss]);
    }
    int64_t d = static_cast<int64_t>(ndim) - 2;
    for (; d >= 0; --d) {
      if (++counter[d] < sizes[d]) {
        doff += dst_strides[d];
        soff += src_strides[d];
        break;
      }
      doff -= (sizes[d] - 1) * dst_strides[d];
      soff -= (sizes[d] - 1) * src_strides[d];
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

// Byte range [first, last) of storage that a tensor's elements touch (empty for numel 0).
std::pair<int64_t, int64_t> ByteRange(const Tensor& t) {
  if (t.numel() == 0) return {0, 0};
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.sizes()[d] - 1) * t.strides()[d];
  const int64_t item = static_cast<int64_t>(t.itemsize());
  return {t.storage_offset() * item, (last + 1) * item};
}

bool MayOverlap(const Tensor& a, const Tensor& b) {
  if (!a.is_alias_of(b)) return false;
  auto [a0, a1] = ByteRange(a);
  auto [b0, b1] = ByteRange(b);
  return a0 < b1 && b0 < a1;
}

bool SameView(const Tensor& a, const Tensor& b) {
  return a.is_alias_of(b) && a.storage_offset() == b.storage_offset() && a.dtype() == b.dtype() &&
         a.sizes() == b.sizes() && a.strides() == b.strides();
}

void CopyCpu(const Tensor& dst, const Tensor& src) {
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    if (dst.nbytes() > 0) std::memcpy(dst.data_ptr(), src.data_ptr(), dst.nbytes());
    return;
  }
  VisitDType(dst.dtype(), [&](auto dst_tag) {
    using Dst = decltype(dst_tag);
    VisitDType(src.dtype(), [&](auto src_tag) {
      using Src = decltype(src_tag);
      StridedConvert(static_cast<Dst*>(dst.data_ptr()), dst.strides(),
                     static_cast<const Src*>(src.data_ptr()), src.strides(), dst.sizes());
    });
  });
}

}  // namespace

const Tensor& Tensor::copy_(const Tensor& src) const {
  OPREG_CHECK_VALUE(defined(), "copy_(): destination tensor is undefined");
  OPREG_CHECK_VALUE(src.defined(), "copy_(): source tensor is undefined");
  OPREG_CHECK_VALUE(!impl().storage().read_only(),
                    "copy_(): the destination's memory is read-only (a read-only NumPy array or "
                    "DLPack tensor); copy it into a writable tensor first");
  OPREG_CHECK_VALUE(sizes() == src.sizes(), "copy_(): shape mismatch: destination has shape ",
                    Shape(sizes()), " but source has shape ", Shape(src.sizes()));
  for (int64_t d = 0; d < dim(); ++d) {
    OPREG_CHECK_VALUE(strides()[d] != 0 || sizes()[d] <= 1,
                      "copy_(): destination has overlapping elements (stride 0 in dim ", d,
                      " of size ", sizes()[d], ")");
  }
  const Device dd = device();
  const Device sd = src.device();
  if (dd.is_meta()) return *this;  // Shapes only.
  OPREG_CHECK_VALUE(!sd.is_meta(),
                    "copy_(): cannot copy from a meta tensor (it has no data) into a ", dd.str(),
                    " tensor");
  if (numel() == 0 || SameView(*this, src)) return *this;
  if (MayOverlap(*this, src)) {
    // Reading and writing the same bytes in one pass would read already-overwritten values.
    return copy_(src.clone());
  }
  if (dd.is_cpu() && sd.is_cpu()) {
    CopyCpu(*this, src);
    return *this;
  }
  OPREG_CHECK_NOT_IMPLEMENTED(
      dtype() == src.dtype() && is_contiguous() && src.is_contiguous(), "copy_(): copying ",
      sd.str(), " -> ", dd.str(), " needs equal dtypes and contiguous tensors (destination ",
      DTypeName(dtype()), is_contiguous() ? " contiguous" : " non-contiguous", ", source ",
      DTypeName(src.dtype()), src.is_contiguous() ? " contiguous" : " non-contiguous",
      "); convert on one device first");
  CudaMemcpy(data_ptr(), src.data_ptr(), nbytes(), dd.is_cuda() ? dd.index : sd.index);
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  static_cast<const Tensor*>(this)->copy_(src);
  return *this;
}

Tensor Tensor::clone() const {
  Tensor result = empty(sizes(), dtype(), device());
  result.copy_(*this);
  return result;
}

}  // namespace opreg
