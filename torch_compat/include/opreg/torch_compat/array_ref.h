// c10::ArrayRef (at::IntArrayRef, at::TensorList), c10::irange and c10::optional: the
// non-owning list view and helpers of libtorch's C++ API.
//
// Ownership: an ArrayRef does not own its elements; whatever it was made from (a vector, a
// braced list for the duration of the full expression, a tensor's sizes) must outlive it.
//
// Errors: at() throws opreg::Error (kIndex) out of range; operator[] does not check.
// Thread safety: a view; reading it concurrently is safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <ostream>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "opreg/core/error.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif

namespace c10 {

template <class T>
using optional = std::optional<T>;
using std::make_optional;
using std::nullopt;
using std::nullopt_t;

template <class T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  using size_type = size_t;

  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT: as in c10.
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  constexpr ArrayRef(const T* begin, const T* end) : data_(begin), size_(end - begin) {}
  template <class A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const T (&a)[N]) : data_(a), size_(N) {}  // NOLINT
  // Views the list's array, which lives until the end of the full expression (a braced list
  // passed straight to a function), as in c10.
  constexpr ArrayRef(const std::initializer_list<T>& list)  // NOLINT
      : data_(list.begin() == list.end() ? nullptr : list.begin()), size_(list.size()) {}
  constexpr ArrayRef(absl::Span<const T> s) : data_(s.data()), size_(s.size()) {}  // NOLINT

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T* cbegin() const { return data_; }
  constexpr const T* cend() const { return data_ + size_; }
  std::reverse_iterator<const T*> rbegin() const { return std::reverse_iterator(end()); }
  std::reverse_iterator<const T*> rend() const { return std::reverse_iterator(begin()); }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    OPREG_CHECK_INDEX(i < size_, "ArrayRef: invalid index ", i, " for length ", size_);
    return data_[i];
  }
  const T& front() const {
    OPREG_CHECK_INDEX(size_ > 0, "ArrayRef: front() of an empty list");
    return data_[0];
  }
  const T& back() const {
    OPREG_CHECK_INDEX(size_ > 0, "ArrayRef: back() of an empty list");
    return data_[size_ - 1];
  }
  ArrayRef slice(size_t start, size_t length) const {
    OPREG_CHECK_INDEX(start + length <= size_, "ArrayRef: slice(", start, ", ", length,
                      ") of a list of length ", size_);
    return ArrayRef(data_ + start, length);
  }
  ArrayRef slice(size_t start) const { return slice(start, size_ - start); }
  bool equals(ArrayRef other) const {
    if (size_ != other.size_) return false;
    for (size_t i = 0; i < size_; ++i) {
      if (!(data_[i] == other.data_[i])) return false;
    }
    return true;
  }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const { return vec(); }                                   // NOLINT
  operator absl::Span<const T>() const { return absl::Span<const T>(data_, size_); }  // NOLINT

  friend bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }
  friend bool operator!=(ArrayRef a, ArrayRef b) { return !a.equals(b); }
  friend bool operator==(ArrayRef a, const std::vector<T>& b) { return a.equals(b); }
  friend bool operator!=(ArrayRef a, const std::vector<T>& b) { return !a.equals(b); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// "[2, 3]", as torch prints sizes.
template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> list) {
  os << "[";
  for (size_t i = 0; i < list.size(); ++i) os << (i ? ", " : "") << list[i];
  return os << "]";
}

using IntArrayRef = ArrayRef<int64_t>;

// for (auto i : c10::irange(n)) / irange(begin, end): an integer range.
template <class I>
class IntegerRange {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = I;
    using difference_type = std::ptrdiff_t;
    using pointer = const I*;
    using reference = I;
    explicit iterator(I v) : v_(v) {}
    I operator*() const { return v_; }
    iterator& operator++() {
      ++v_;
      return *this;
    }
    bool operator==(const iterator& o) const { return v_ == o.v_; }
    bool operator!=(const iterator& o) const { return v_ != o.v_; }

   private:
    I v_;
  };
  IntegerRange(I begin, I end) : begin_(begin), end_(end < begin ? begin : end) {}
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  I begin_, end_;
};
template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
IntegerRange<I> irange(I end) {
  return IntegerRange<I>(I{0}, end);
}
template <class I1, class I2,
          std::enable_if_t<std::is_integral_v<I1> && std::is_integral_v<I2>, int> = 0>
IntegerRange<I2> irange(I1 begin, I2 end) {
  return IntegerRange<I2>(static_cast<I2>(begin), end);
}

}  // namespace c10

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
