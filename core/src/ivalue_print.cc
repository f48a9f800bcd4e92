// IValue printing, following PyTorch's operator<<(std::ostream&, const IValue&) as schema
// printing uses it (docs/reference/schema_grammar.md section 1.6).
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "opreg/core/ivalue.h"

namespace opreg {

std::string FormatDoubleTorch(double value) {
  const int cls = std::fpclassify(value);
  // [-2^63, 2^63): the doubles that convert to int64 without overflow (checked before the cast,
  // which would otherwise be undefined).
  constexpr double kTwo63 = 9223372036854775808.0;
  if ((cls == FP_NORMAL || cls == FP_ZERO) && value >= -kTwo63 && value < kTwo63) {
    const auto as_int = static_cast<int64_t>(value);
    if (static_cast<double>(as_int) == value) return StrCat(as_int, ".");
  }
  // printf("%.17g") is what std::ostream << setprecision(17) produces in default notation.
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

namespace {

std::string FormatComplex(std::complex<double> c) {
  // PyTorch prints the sign from `imag >= 0` and then |imag|, so -0.0 gets '+' and NaN gets '-'.
  const double imag = c.imag();
  return StrCat(FormatDoubleTorch(c.real()), imag >= 0 ? "+" : "-",
                FormatDoubleTorch(std::abs(imag)), "j");
}

template <class List, class PrintElement>
void PrintList(std::ostream& os, const List& list, const char* open, const char* close,
               PrintElement print) {
  os << open;
  bool first = true;
  for (const auto& element : list) {
    if (!first) os << ", ";
    first = false;
    print(element);
  }
  os << close;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const IValue& value) {
  using Tag = IValue::Tag;
  switch (value.tag()) {
    case Tag::kNone:
      return os << "None";
    case Tag::kTensor:
      return os << value.toTensor().ToString();
    case Tag::kInt:
      return os << value.toInt();
    case Tag::kDouble:
      return os << FormatDoubleTorch(value.toDouble());
    case Tag::kComplex:
      return os << FormatComplex(value.toComplex());
    case Tag::kBool:
      return os << (value.toBool() ? "True" : "False");
    case Tag::kString:
      return os << value.toStringRef();
    case Tag::kDevice:
      return os << value.toDevice().str();
    case Tag::kIntList:
      PrintList(os, value.toIntList(), "[", "]", [&](int64_t v) { os << v; });
      return os;
    case Tag::kDoubleList:
      PrintList(os, value.toDoubleList(), "[", "]", [&](double v) { os << FormatDoubleTorch(v); });
      return os;
    case Tag::kBoolList:
      PrintList(os, value.toBoolList(), "[", "]", [&](bool v) { os << (v ? "True" : "False"); });
      return os;
    case Tag::kComplexList:
      PrintList(os, value.toComplexList(), "[", "]",
                [&](std::complex<double> v) { os << FormatComplex(v); });
      return os;
    case Tag::kStringList:
      PrintList(os, value.toStringList(), "[", "]", [&](const std::string& v) { os << v; });
      return os;
    case Tag::kTensorList:
      PrintList(os, value.toTensorList(), "[", "]", [&](const Tensor& v) { os << v.ToString(); });
      return os;
    case Tag::kOptionalTensorList:
      PrintList(os, value.toOptionalTensorList(), "[", "]", [&](const std::optional<Tensor>& v) {
        if (v.has_value()) {
          os << v->ToString();
        } else {
          os << "None";
        }
      });
      return os;
    case Tag::kGenericList:
      PrintList(os, value.toGenericList(), "[", "]", [&](const IValue& v) { os << v; });
      return os;
    case Tag::kTuple: {
      const auto& elements = value.toTuple();
      // Python's one-element tuple spelling, as PyTorch prints it.
      PrintList(os, elements, "(", elements.size() == 1 ? ",)" : ")",
                [&](const IValue& v) { os << v; });
      return os;
    }
    case Tag::kObject: {
      const auto& object = value.toObject();
      return os << "<" << object->class_name() << " object at "
                << static_cast<const void*>(object.get()) << ">";
    }
  }
  return os;
}

}  // namespace opreg
