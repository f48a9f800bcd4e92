// IValue construction, access and equality.
#include "opreg/core/ivalue.h"

#include <utility>

namespace opreg {
namespace {

template <class T, int Kind = 0>
intrusive_ptr<detail::IValuePayload<T, Kind>> MakePayload(T value) {
  return make_intrusive<detail::IValuePayload<T, Kind>>(std::move(value));
}

}  // namespace

IValue::IValue(std::string v) : v_(MakePayload(std::move(v))) {}
IValue::IValue(std::vector<int64_t> v) : v_(MakePayload(std::move(v))) {}
IValue::IValue(std::vector<double> v) : v_(MakePayload(std::move(v))) {}
IValue::IValue(std::vector<bool> v) : v_(MakePayload(std::move(v))) {}
IValue::IValue(std::vector<std::complex<double>> v) : v_(MakePayload(std::move(v))) {}
IValue::IValue(std::vector<std::string> v) : v_(MakePayload(std::move(v))) {}
IValue::IValue(std::vector<Tensor> v) : v_(MakePayload(std::move(v))) {}
IValue::IValue(std::vector<std::optional<Tensor>> v) : v_(MakePayload(std::move(v))) {}
IValue::IValue(intrusive_ptr<CustomClassHolder> v) {
  if (v) v_ = std::move(v);
}

IValue IValue::GenericList(std::vector<IValue> elements) {
  IValue result;
  result.v_ = MakePayload<std::vector<IValue>, 0>(std::move(elements));
  return result;
}

IValue IValue::Tuple(std::vector<IValue> elements) {
  IValue result;
  result.v_ = MakePayload<std::vector<IValue>, 1>(std::move(elements));
  return result;
}

std::string_view IValue::TagName(Tag tag) {
  switch (tag) {
    case Tag::kNone:
      return "None";
    case Tag::kTensor:
      return "Tensor";
    case Tag::kInt:
      return "Int";
    case Tag::kDouble:
      return "Double";
    case Tag::kComplex:
      return "Complex";
    case Tag::kBool:
      return "Bool";
    case Tag::kString:
      return "String";
    case Tag::kDevice:
      return "Device";
    case Tag::kIntList:
      return "IntList";
    case Tag::kDoubleList:
      return "DoubleList";
    case Tag::kBoolList:
      return "BoolList";
    case Tag::kComplexList:
      return "ComplexList";
    case Tag::kStringList:
      return "StringList";
    case Tag::kTensorList:
      return "TensorList";
    case Tag::kOptionalTensorList:
      return "OptionalTensorList";
    case Tag::kGenericList:
      return "GenericList";
    case Tag::kTuple:
      return "Tuple";
    case Tag::kObject:
      return "Object";
  }
  return "Unknown";
}

void IValue::ThrowTagMismatch(Tag expected) const {
  OPREG_THROW(kType, "expected ", TagName(expected), " but got ", TagName());
}

// Each accessor checks the tag once and then reads the alternative by index.
#define OPREG_IVALUE_GET_(tag_enumerator)             \
  if (OPREG_UNLIKELY(tag() != Tag::tag_enumerator)) { \
    ThrowTagMismatch(Tag::tag_enumerator);            \
  }                                                   \
  return std::get<static_cast<size_t>(Tag::tag_enumerator)>(v_)

const Tensor& IValue::toTensor() const& { OPREG_IVALUE_GET_(kTensor); }
Tensor IValue::toTensor() && {
  if (OPREG_UNLIKELY(tag() != Tag::kTensor)) ThrowTagMismatch(Tag::kTensor);
  Tensor t = std::move(std::get<Tensor>(v_));
  v_.emplace<0>();
  return t;
}
int64_t IValue::toInt() const { OPREG_IVALUE_GET_(kInt); }
double IValue::toDouble() const { OPREG_IVALUE_GET_(kDouble); }
std::complex<double> IValue::toComplex() const { OPREG_IVALUE_GET_(kComplex); }
bool IValue::toBool() const { OPREG_IVALUE_GET_(kBool); }
Device IValue::toDevice() const { OPREG_IVALUE_GET_(kDevice); }
const intrusive_ptr<CustomClassHolder>& IValue::toObject() const { OPREG_IVALUE_GET_(kObject); }
#undef OPREG_IVALUE_GET_

#define OPREG_IVALUE_GET_PAYLOAD_(tag_enumerator)     \
  if (OPREG_UNLIKELY(tag() != Tag::tag_enumerator)) { \
    ThrowTagMismatch(Tag::tag_enumerator);            \
  }                                                   \
  return std::get<static_cast<size_t>(Tag::tag_enumerator)>(v_)->value

const std::string& IValue::toStringRef() const { OPREG_IVALUE_GET_PAYLOAD_(kString); }
const std::vector<int64_t>& IValue::toIntList() const { OPREG_IVALUE_GET_PAYLOAD_(kIntList); }
const std::vector<double>& IValue::toDoubleList() const { OPREG_IVALUE_GET_PAYLOAD_(kDoubleList); }
const std::vector<bool>& IValue::toBoolList() const { OPREG_IVALUE_GET_PAYLOAD_(kBoolList); }
const std::vector<std::complex<double>>& IValue::toComplexList() const {
  OPREG_IVALUE_GET_PAYLOAD_(kComplexList);
}
const std::vector<std::string>& IValue::toStringList() const {
  OPREG_IVALUE_GET_PAYLOAD_(kStringList);
}
const std::vector<Tensor>& IValue::toTensorList() const { OPREG_IVALUE_GET_PAYLOAD_(kTensorList); }
const std::vector<std::optional<Tensor>>& IValue::toOptionalTensorList() const {
  OPREG_IVALUE_GET_PAYLOAD_(kOptionalTensorList);
}
const std::vector<IValue>& IValue::toGenericList() const {
  OPREG_IVALUE_GET_PAYLOAD_(kGenericList);
}
const std::vector<IValue>& IValue::toTuple() const { OPREG_IVALUE_GET_PAYLOAD_(kTuple); }
#undef OPREG_IVALUE_GET_PAYLOAD_

double IValue::toScalarDouble() const {
  switch (tag()) {
    case Tag::kInt:
      return static_cast<double>(toInt());
    case Tag::kDouble:
      return toDouble();
    case Tag::kBool:
      return toBool() ? 1.0 : 0.0;
    default:
      OPREG_THROW(kType, "expected a real Scalar (Int, Double or Bool) but got ", TagName());
  }
}

namespace {

bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.unsafe_get_impl() == b.unsafe_get_impl();
}

bool SameOptionalTensor(const std::optional<Tensor>& a, const std::optional<Tensor>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || SameTensor(*a, *b);
}

template <class T, class Eq>
bool ListEqual(const std::vector<T>& a, const std::vector<T>& b, Eq eq) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!eq(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

bool operator==(const IValue& a, const IValue& b) {
  using Tag = IValue::Tag;
  if (a.tag() != b.tag()) return false;
  switch (a.tag()) {
    case Tag::kNone:
      return true;
    case Tag::kTensor:
      return SameTensor(a.toTensor(), b.toTensor());
    case Tag::kInt:
      return a.toInt() == b.toInt();
    case Tag::kDouble:
      return a.toDouble() == b.toDouble();
    case Tag::kComplex:
      return a.toComplex() == b.toComplex();
    case Tag::kBool:
      return a.toBool() == b.toBool();
    case Tag::kString:
      return a.toStringRef() == b.toStringRef();
    case Tag::kDevice:
      return a.toDevice() == b.toDevice();
    case Tag::kIntList:
      return a.toIntList() == b.toIntList();
    case Tag::kDoubleList:
      return a.toDoubleList() == b.toDoubleList();
    case Tag::kBoolList:
      return a.toBoolList() == b.toBoolList();
    case Tag::kComplexList:
      return a.toComplexList() == b.toComplexList();
    case Tag::kStringList:
      return a.toStringList() == b.toStringList();
    case Tag::kTensorList:
      return ListEqual(a.toTensorList(), b.toTensorList(), SameTensor);
    case Tag::kOptionalTensorList:
      return ListEqual(a.toOptionalTensorList(), b.toOptionalTensorList(), SameOptionalTensor);
    case Tag::kGenericList:
      return a.toGenericList() == b.toGenericList();
    case Tag::kTuple:
      return a.toTuple() == b.toTuple();
    case Tag::kObject:
      return a.toObject() == b.toObject();
  }
  return false;
}

}  // namespace opreg
