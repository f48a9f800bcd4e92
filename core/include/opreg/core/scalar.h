// Scalar: the C++ value of a schema `Scalar` argument (PyTorch's c10::Scalar): an int, a
// double, a bool or a complex number.
//
// Value type; thread-compatible.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <variant>

#include "opreg/core/ivalue.h"

namespace opreg {

class Scalar {
 public:
  Scalar() : v_(int64_t{0}) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : v_(static_cast<bool>(v)) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : v_(static_cast<double>(v)) {}  // NOLINT
  Scalar(std::complex<double> v) : v_(v) {}    // NOLINT

  // From a boxed int, double, bool or complex; kType error otherwise.
  static Scalar FromIValue(const IValue& v);
  IValue ToIValue() const;

  bool isIntegral() const { return std::holds_alternative<int64_t>(v_); }
  bool isFloatingPoint() const { return std::holds_alternative<double>(v_); }
  bool isBoolean() const { return std::holds_alternative<bool>(v_); }
  bool isComplex() const { return std::holds_alternative<std::complex<double>>(v_); }

  // The value converted to double (complex: kValue error when the imaginary part is non-zero).
  double toDouble() const;
  // The value converted to int64 (doubles truncate; kValue error when not finite or complex).
  int64_t toInt() const;
  bool toBool() const;
  std::complex<double> toComplex() const;

  friend bool operator==(const Scalar& a, const Scalar& b) { return a.v_ == b.v_; }
  friend bool operator!=(const Scalar& a, const Scalar& b) { return !(a == b); }

 private:
  std::variant<int64_t, double, bool, std::complex<double>> v_;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace opreg
