// opreg::torch_stable: <torch/headeronly/util/HeaderOnlyArrayRef.h>. A non-owning view of a
// contiguous array (c10::ArrayRef's header-only subset); IntHeaderOnlyArrayRef views int64_t.
// The viewed storage must outlive the view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "Exception.h"

namespace torch::headeronly {

template <class T>
class HeaderOnlyArrayRef {
 public:
  using iterator = const T*;
  using const_iterator = const T*;
  using value_type = T;
  using size_type = size_t;

  constexpr HeaderOnlyArrayRef() : data_(nullptr), length_(0) {}
  constexpr HeaderOnlyArrayRef(const T& one) : data_(&one), length_(1) {}  // NOLINT
  constexpr HeaderOnlyArrayRef(const T* data, size_t length) : data_(data), length_(length) {}
  constexpr HeaderOnlyArrayRef(const T* begin, const T* end)
      : data_(begin), length_(static_cast<size_t>(end - begin)) {}
  template <class A>
  HeaderOnlyArrayRef(const std::vector<T, A>& v)  // NOLINT
      : data_(v.data()), length_(v.size()) {}
  template <size_t N>
  constexpr HeaderOnlyArrayRef(const T (&arr)[N]) : data_(arr), length_(N) {}  // NOLINT
  // Views the list's array, which lives to the end of the full expression (a call's argument),
  // as c10::ArrayRef does; GCC's lifetime warning does not know that use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr HeaderOnlyArrayRef(const std::initializer_list<T>& list)  // NOLINT
      : data_(list.begin() == list.end() ? nullptr : list.begin()), length_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + length_; }
  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return length_; }
  constexpr bool empty() const { return length_ == 0; }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[length_ - 1]; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    STD_TORCH_CHECK(i < length_, "HeaderOnlyArrayRef: invalid index ", i, " for length ",
                    length_);
    return data_[i];
  }
  bool equals(HeaderOnlyArrayRef other) const {
    if (length_ != other.length_) return false;
    for (size_t i = 0; i < length_; ++i) {
      if (!(data_[i] == other.data_[i])) return false;
    }
    return true;
  }
  HeaderOnlyArrayRef slice(size_t start, size_t n) const {
    STD_TORCH_CHECK(start + n <= length_, "HeaderOnlyArrayRef: slice out of range");
    return HeaderOnlyArrayRef(data_ + start, n);
  }
  std::vector<T> vec() const { return std::vector<T>(data_, data_ + length_); }

 private:
  const T* data_;
  size_t length_;
};

template <class T>
bool operator==(HeaderOnlyArrayRef<T> a, HeaderOnlyArrayRef<T> b) {
  return a.equals(b);
}
template <class T>
bool operator!=(HeaderOnlyArrayRef<T> a, HeaderOnlyArrayRef<T> b) {
  return !a.equals(b);
}

using IntHeaderOnlyArrayRef = HeaderOnlyArrayRef<int64_t>;

}  // namespace torch::headeronly
