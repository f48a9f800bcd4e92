#include "opreg/ops/checks.h"

#include <algorithm>
#include <cstdint>

#include "memory_overlap.h"
#include "opreg/core/error.h"
#include "opreg/core/string_util.h"

namespace opreg::ops {
namespace {

std::string ArgRef(const NamedTensor& t) {
  return StrCat("argument '", t.name, "' (#", t.index, ")");
}

std::string_view DT(DType d) { return DTypeName(d); }

}  // namespace

std::string ShapeString(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) StrAppend(&s, i ? ", " : "", sizes[i]);
  s += "]";
  return s;
}

void CheckDefined(std::string_view op, std::string_view arg, int index, const Tensor& t) {
  OPREG_CHECK_VALUE(t.defined(),
                    ArgErrorMessage(op, arg, index, "a tensor", "an undefined tensor"));
}

void CheckFloating(std::string_view op, std::string_view arg, int index, const Tensor& t) {
  CheckDefined(op, arg, index, t);
  const DType d = t.dtype();
  OPREG_CHECK_TYPE(d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16,
                   ArgErrorMessage(op, arg, index, "dtype f32, f16 or bf16", DT(d)));
}

void CheckDType(std::string_view op, std::string_view arg, int index, const Tensor& t,
                DType dtype) {
  CheckDefined(op, arg, index, t);
  OPREG_CHECK_TYPE(t.dtype() == dtype,
                   ArgErrorMessage(op, arg, index, StrCat("dtype ", DT(dtype)), DT(t.dtype())));
}

void CheckDevice(std::string_view op, std::string_view arg, int index, const Tensor& t,
                 Device device) {
  CheckDefined(op, arg, index, t);
  const Device d = t.device();
  const bool same =
      d.type == device.type && (d.index == device.index || d.index < 0 || device.index < 0);
  OPREG_CHECK_VALUE(same,
                    ArgErrorMessage(op, arg, index, StrCat("device ", device.str()), d.str()));
}

void CheckMinDim(std::string_view op, std::string_view arg, int index, const Tensor& t,
                 int64_t min_dim) {
  OPREG_CHECK_VALUE(
      t.dim() >= min_dim,
      ArgErrorMessage(op, arg, index, StrCat("a tensor with at least ", min_dim, " dimension(s)"),
                      StrCat(t.dim())));
}

void CheckShape(std::string_view op, std::string_view arg, int index, const Tensor& t,
                IntArrayRef sizes) {
  OPREG_CHECK_VALUE(t.sizes() == sizes,
                    ArgErrorMessage(op, arg, index, StrCat("shape ", ShapeString(sizes)),
                                    ShapeString(t.sizes())));
}

void CheckSameShape(std::string_view op, std::string_view arg, int index, const Tensor& t,
                    const NamedTensor& like) {
  OPREG_CHECK_VALUE(t.sizes() == like.tensor->sizes(),
                    ArgErrorMessage(op, arg, index,
                                    StrCat("shape ", ShapeString(like.tensor->sizes()),
                                           " (that of ", ArgRef(like), ")"),
                                    ShapeString(t.sizes())));
}

int64_t WrapDim(std::string_view op, std::string_view arg, int index, int64_t dim, int64_t ndim) {
  const int64_t lo = -std::max<int64_t>(ndim, 1), hi = std::max<int64_t>(ndim, 1) - 1;
  OPREG_CHECK_INDEX(
      dim >= lo && dim <= hi,
      ArgErrorMessage(op, arg, index, StrCat("a dimension in [", lo, ", ", hi, "]"), StrCat(dim)));
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

void CheckOut(std::string_view op, std::string_view out_name, int index, const Tensor& out,
              IntArrayRef expected_sizes, DType expected_dtype, Device device) {
  CheckDefined(op, out_name, index, out);
  CheckShape(op, out_name, index, out, expected_sizes);
  CheckDType(op, out_name, index, out, expected_dtype);
  CheckDevice(op, out_name, index, out, device);
  CheckWrittenLayout(op, out_name, index, out, device);
}

void CheckWrittenLayout(std::string_view op, std::string_view arg, int index, const Tensor& t,
                        Device device) {
  // CPU (and Meta) kernels write a strided tensor through a contiguous temporary (WriteTarget
  // in register_cpu.cc); the CUDA kernels write in place and need it contiguous.
  if (device.is_cuda()) {
    OPREG_CHECK_VALUE(t.is_contiguous(),
                      ArgErrorMessage(op, arg, index, "a contiguous tensor (CUDA kernels)",
                                      StrCat("strides ", ShapeString(t.strides()))));
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    OPREG_CHECK_VALUE(t.strides()[d] != 0 || t.sizes()[d] <= 1,
                      ArgErrorMessage(op, arg, index, "a tensor whose elements do not overlap",
                                      StrCat("stride 0 in dim ", d, " (an expanded tensor)")));
  }
}

void CheckContiguousInput(std::string_view op, std::string_view arg, int index, const Tensor& t) {
  OPREG_CHECK_VALUE(!t.defined() || t.is_contiguous(),
                    ArgErrorMessage(op, arg, index,
                                    "a contiguous tensor (the CUDA kernel reads it in place; call "
                                    "contiguous() first)",
                                    StrCat("strides ", ShapeString(t.strides()))));
}

namespace {
// [first byte, one past the last byte] the elements of `t` reach, relative to its storage.
std::pair<int64_t, int64_t> ByteExtent(const Tensor& t) {
  int64_t lo = t.storage_offset(), hi = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t reach = (t.sizes()[d] - 1) * t.strides()[d];
    if (reach < 0)
      lo += reach;
    else
      hi += reach;
  }
  const int64_t item = static_cast<int64_t>(t.itemsize());
  return {lo * item, (hi + 1) * item};
}
}  // namespace

bool MemoryOverlaps(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) return false;
  auto [alo, ahi] = ByteExtent(a);
  auto [blo, bhi] = ByteExtent(b);
  // Byte offsets of each view's first element from one origin: the storage's start, or for two
  // storages, address 0 (the same NumPy array or torch tensor passed twice is imported twice, so
  // different storages can hold the same bytes; meta tensors hold none).
  int64_t a_origin = 0, b_origin = 0;
  if (!a.is_alias_of(b)) {
    const auto* pa = static_cast<const char*>(a.storage().data());
    const auto* pb = static_cast<const char*>(b.storage().data());
    if (pa == nullptr || pb == nullptr || a.device() != b.device()) return false;
    a_origin = static_cast<int64_t>(reinterpret_cast<uintptr_t>(pa));
    b_origin = static_cast<int64_t>(reinterpret_cast<uintptr_t>(pb));
  }
  if (!(a_origin + alo < b_origin + bhi && b_origin + blo < a_origin + ahi)) return false;
  // The spans meet; whether an element is shared depends on the strides (slices of one row-major
  // buffer interleave without sharing one).
  const int64_t ia = static_cast<int64_t>(a.itemsize()), ib = static_cast<int64_t>(b.itemsize());
  DimVector a_strides(a.strides().begin(), a.strides().end());
  DimVector b_strides(b.strides().begin(), b.strides().end());
  for (int64_t& s : a_strides) s *= ia;
  for (int64_t& s : b_strides) s *= ib;
  const int64_t delta = (b_origin + b.storage_offset() * ib) - (a_origin + a.storage_offset() * ia);
  return internal::ViewsShareAByte({a.sizes(), a_strides, ia}, {b.sizes(), b_strides, ib}, delta);
}

void CheckNoAlias(std::string_view op, std::string_view out_name, int index, const Tensor& out,
                  std::initializer_list<NamedTensor> inputs) {
  for (const NamedTensor& in : inputs) {
    if (in.tensor == nullptr || !in.tensor->defined()) continue;
    OPREG_CHECK_VALUE(
        !MemoryOverlaps(out, *in.tensor),
        ArgErrorMessage(op, out_name, index, StrCat("a tensor that does not overlap ", ArgRef(in)),
                        "one that shares its memory"));
  }
}

DimVector BroadcastShapes(std::string_view op, const NamedTensor& a, const NamedTensor& b) {
  IntArrayRef sa = a.tensor->sizes(), sb = b.tensor->sizes();
  const size_t n = std::max(sa.size(), sb.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < sa.size() ? sa[sa.size() - 1 - i] : 1;
    const int64_t y = i < sb.size() ? sb[sb.size() - 1 - i] : 1;
    OPREG_CHECK_VALUE(x == y || x == 1 || y == 1,
                      ArgErrorMessage(op, b.name, b.index,
                                      StrCat("a shape broadcastable with ", ShapeString(sa), " (",
                                             ArgRef(a), ")"),
                                      ShapeString(sb)));
    out[n - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

}  // namespace opreg::ops
