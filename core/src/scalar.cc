#include "opreg/core/scalar.h"

#include <cmath>
#include <ostream>

#include "opreg/core/error.h"

namespace opreg {

Scalar Scalar::FromIValue(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::kInt:
      return Scalar(v.toInt());
    case IValue::Tag::kDouble:
      return Scalar(v.toDouble());
    case IValue::Tag::kBool:
      return Scalar(v.toBool());
    case IValue::Tag::kComplex:
      return Scalar(v.toComplex());
    default:
      OPREG_THROW(kType, "expected a Scalar (int, float, bool or complex) but got ", v.TagName());
  }
}

IValue Scalar::ToIValue() const {
  return std::visit([](auto x) { return IValue(x); }, v_);
}

double Scalar::toDouble() const {
  if (auto* c = std::get_if<std::complex<double>>(&v_)) {
    OPREG_CHECK_VALUE(c->imag() == 0, "cannot convert the complex Scalar ", c->real(), "+",
                      c->imag(), "j to a real number");
    return c->real();
  }
  return std::visit(
      [](auto x) -> double {
        if constexpr (std::is_same_v<decltype(x), std::complex<double>>) {
          return x.real();
        } else {
          return static_cast<double>(x);
        }
      },
      v_);
}

int64_t Scalar::toInt() const {
  if (auto* i = std::get_if<int64_t>(&v_)) return *i;
  if (auto* b = std::get_if<bool>(&v_)) return *b ? 1 : 0;
  const double d = toDouble();
  // Casting a double outside int64's range is undefined behaviour: refuse it.
  OPREG_CHECK_VALUE(std::isfinite(d) && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18,
                    "cannot convert the Scalar ", d, " to an integer");
  return static_cast<int64_t>(d);
}

bool Scalar::toBool() const {
  if (auto* b = std::get_if<bool>(&v_)) return *b;
  if (auto* c = std::get_if<std::complex<double>>(&v_)) return *c != std::complex<double>(0, 0);
  return toDouble() != 0;
}

std::complex<double> Scalar::toComplex() const {
  if (auto* c = std::get_if<std::complex<double>>(&v_)) return *c;
  return {toDouble(), 0};
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) { return os << s.ToIValue(); }

}  // namespace opreg
