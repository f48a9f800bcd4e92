// Element access for tests and debugging: item(), at(), set() (CPU only, through double).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "element_convert.h"
#include "opreg/core/tensor.h"

namespace opreg {

size_t Tensor::ElementOffset(std::initializer_list<int64_t> index, const char* method) const {
  OPREG_CHECK_VALUE(device().is_cpu(), method, ": element access needs a cpu tensor, got ",
                    device().str());
  OPREG_CHECK_INDEX(static_cast<int64_t>(index.size()) == dim(), method, ": got ", index.size(),
                    " indices for a ", dim(), "-d tensor");
  int64_t offset = storage_offset();
  int64_t d = 0;
  for (int64_t i : index) {
    const int64_t size = sizes()[d];
    OPREG_CHECK_INDEX(i >= -size && i < size, method, ": index ", i, " out of range for dim ", d,
                      " of size ", size);
    offset += (i < 0 ? i + size : i) * strides()[d];
    ++d;
  }
  return static_cast<size_t>(offset) * itemsize();
}

double Tensor::item() const {
  OPREG_CHECK_VALUE(numel() == 1, "item(): the tensor has ", numel(),
                    " elements; item() needs exactly one");
  OPREG_CHECK_VALUE(device().is_cpu(), "item(): element access needs a cpu tensor, got ",
                    device().str());
  return VisitDType(dtype(), [&](auto tag) {
    using T = decltype(tag);
    return internal::ConvertElement<double>(*static_cast<const T*>(data_ptr()));
  });
}

double Tensor::at(std::initializer_list<int64_t> index) const {
  const size_t byte_offset = ElementOffset(index, "at()");
  const char* base = static_cast<const char*>(storage().data()) + byte_offset;
  return VisitDType(dtype(), [&](auto tag) {
    using T = decltype(tag);
    return internal::ConvertElement<double>(*reinterpret_cast<const T*>(base));
  });
}

void Tensor::set(std::initializer_list<int64_t> index, double value) const {
  const size_t byte_offset = ElementOffset(index, "set()");
  char* base = static_cast<char*>(storage().data()) + byte_offset;
  VisitDType(dtype(), [&](auto tag) {
    using T = decltype(tag);
    *reinterpret_cast<T*>(base) = internal::ConvertElement<T>(value);
  });
}

}  // namespace opreg
