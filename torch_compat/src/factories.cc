// TensorOptions and the factory functions (empty, zeros, full, arange, *_like, from_blob,
// Tensor::to / new_*): libtorch's defaults (float32 on the CPU; dtype inferred from a fill
// value) over opreg's factories.
#include <sstream>

#include "opreg/core/tensor_factories.h"
#include "opreg/torch_compat/tensor.h"

namespace at {
namespace {

// The options a factory may honour; requires_grad / pinned memory / sparse layouts are refused.
void CheckFactoryOptions(const TensorOptions& o, const char* fn) {
  TORCH_CHECK_NOT_IMPLEMENTED(!o.requires_grad(), fn,
                              "(): requires_grad=True needs autograd, which opreg does not have");
  TORCH_CHECK_NOT_IMPLEMENTED(!o.pinned_memory(), fn,
                              "(): pin_memory=True is not supported by opreg's torch_compat");
  TORCH_CHECK_NOT_IMPLEMENTED(o.layout() == Layout::Strided, fn,
                              "(): only the strided layout is supported");
  const auto mf = o.memory_format_opt();
  TORCH_CHECK_NOT_IMPLEMENTED(
      !mf || *mf == MemoryFormat::Contiguous || *mf == MemoryFormat::Preserve, fn,
      "(): only torch.contiguous_format is supported");
}

ScalarType DTypeOfValue(const Scalar& v) {
  if (v.isBoolean()) return ScalarType::Bool;
  if (v.isIntegral()) return ScalarType::Long;
  return ScalarType::Float;
}

TensorOptions LikeOptions(const Tensor& like, const TensorOptions& options) {
  return like.options().merge_in(options);
}

}  // namespace

TensorOptions TensorOptions::merge_in(const TensorOptions& other) const {
  TensorOptions o = *this;
  if (other.dtype_) o.dtype_ = other.dtype_;
  if (other.device_) o.device_ = other.device_;
  if (other.layout_) o.layout_ = other.layout_;
  if (other.memory_format_) o.memory_format_ = other.memory_format_;
  o.requires_grad_ = requires_grad_ || other.requires_grad_;
  o.pinned_memory_ = pinned_memory_ || other.pinned_memory_;
  return o;
}

std::ostream& operator<<(std::ostream& os, const TensorOptions& o) {
  return os << "TensorOptions(dtype=" << o.dtype() << ", device=" << o.device()
            << ", requires_grad=" << (o.requires_grad() ? "true" : "false") << ")";
}

Tensor empty(IntArrayRef sizes, const TensorOptions& options,
             std::optional<MemoryFormat> memory_format) {
  CheckFactoryOptions(options.memory_format(memory_format), "empty");
  return ::opreg::empty(sizes, ToDType(options.dtype().toScalarType()),
                        ToOpregDevice(options.device()));
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  CheckFactoryOptions(options, "empty_strided");
  return ::opreg::empty_strided(sizes, strides, ToDType(options.dtype().toScalarType()),
                                ToOpregDevice(options.device()));
}

Tensor zeros(IntArrayRef sizes, const TensorOptions& options) {
  Tensor t = empty(sizes, options);
  t.zero_();
  return t;
}

Tensor ones(IntArrayRef sizes, const TensorOptions& options) {
  Tensor t = empty(sizes, options);
  t.fill_(Scalar(1));
  return t;
}

Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options) {
  Tensor t = empty(sizes, options.has_dtype() ? options : options.dtype(DTypeOfValue(value)));
  t.fill_(value);
  return t;
}

Tensor arange(const Scalar& end, const TensorOptions& options) {
  return arange(Scalar(0), end, Scalar(1), options);
}
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options) {
  return arange(start, end, Scalar(1), options);
}
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options) {
  CheckFactoryOptions(options, "arange");
  const bool integral =
      !start.isFloatingPoint() && !end.isFloatingPoint() && !step.isFloatingPoint();
  const ScalarType dtype =
      options.dtype_opt().value_or(integral ? ScalarType::Long : ScalarType::Float);
  return ::opreg::arange(start.toDouble(), end.toDouble(), step.toDouble(), ToDType(dtype),
                         ToOpregDevice(options.device()));
}

Tensor empty_like(const Tensor& like, const TensorOptions& options,
                  std::optional<MemoryFormat> memory_format) {
  return empty(like.sizes(), LikeOptions(like, options), memory_format);
}
Tensor zeros_like(const Tensor& like, const TensorOptions& options) {
  return zeros(like.sizes(), LikeOptions(like, options));
}
Tensor ones_like(const Tensor& like, const TensorOptions& options) {
  return ones(like.sizes(), LikeOptions(like, options));
}
Tensor full_like(const Tensor& like, const Scalar& value, const TensorOptions& options) {
  return full(like.sizes(), value, LikeOptions(like, options));
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  return from_blob(data, sizes, std::function<void(void*)>(), options);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  return from_blob(data, sizes, strides, std::function<void(void*)>(), options);
}
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options) {
  CheckFactoryOptions(options, "from_blob");
  return ::opreg::from_blob(data, sizes, ToDType(options.dtype().toScalarType()),
                            ToOpregDevice(options.device()), deleter);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& options) {
  CheckFactoryOptions(options, "from_blob");
  return ::opreg::from_blob(data, sizes, strides, ToDType(options.dtype().toScalarType()),
                            ToOpregDevice(options.device()), deleter);
}

Tensor Tensor::new_empty(IntArrayRef sizes, const TensorOptions& options) const {
  return empty(sizes, this->options().merge_in(options));
}
Tensor Tensor::new_zeros(IntArrayRef sizes, const TensorOptions& options) const {
  return zeros(sizes, this->options().merge_in(options));
}
Tensor Tensor::new_ones(IntArrayRef sizes, const TensorOptions& options) const {
  return ones(sizes, this->options().merge_in(options));
}
Tensor Tensor::new_full(IntArrayRef sizes, const Scalar& value,
                        const TensorOptions& options) const {
  return full(sizes, value, this->options().merge_in(options));
}

Tensor Tensor::to(const TensorOptions& options, bool non_blocking, bool copy) const {
  const TensorOptions target = this->options().merge_in(options);
  // "cuda" without an index means the tensor's own CUDA device here.
  const Device want = target.device();
  const bool same_device =
      want.type() == device().type() && (!want.has_index() || want.index() == device().index());
  if (!copy && target.dtype() == dtype() && same_device) return *this;
  Tensor out = empty(sizes(), target);
  out.copy_(*this, non_blocking);
  return out;
}
Tensor Tensor::to(ScalarType dtype, bool non_blocking, bool copy) const {
  return to(TensorOptions(dtype), non_blocking, copy);
}
Tensor Tensor::to(Device device, bool non_blocking, bool copy) const {
  return to(TensorOptions(device), non_blocking, copy);
}
Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy) const {
  return to(TensorOptions(dtype).device(device), non_blocking, copy);
}

}  // namespace at
