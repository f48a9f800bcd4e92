// IValue construction, access and equality.
#include "opreg/core/ivalue.h"

#include <new>
#include <utility>

namespace opreg {
namespace {

// A new payload holding `value`, with the one reference the IValue will own.
template <class T, int Kind = 0>
intrusive_ptr_target* MakePayload(T value) {
  return make_intrusive<detail::IValuePayload<T, Kind>>(std::move(value)).release();
}

}  // namespace

IValue::IValue(std::string v) : IValue(Tag::kString, MakePayload(std::move(v))) {}
IValue::IValue(std::vector<int64_t> v) : IValue(Tag::kIntList, MakePayload(std::move(v))) {}
IValue::IValue(std::vector<double> v) : IValue(Tag::kDoubleList, MakePayload(std::move(v))) {}
IValue::IValue(std::vector<bool> v) : IValue(Tag::kBoolList, MakePayload(std::move(v))) {}
IValue::IValue(std::vector<std::complex<double>> v)
    : IValue(Tag::kComplexList, MakePayload(std::move(v))) {}
IValue::IValue(std::vector<std::string> v) : IValue(Tag::kStringList, MakePayload(std::move(v))) {}
IValue::IValue(std::vector<Tensor> v) : IValue(Tag::kTensorList, MakePayload(std::move(v))) {}
IValue::IValue(std::vector<std::optional<Tensor>> v)
    : IValue(Tag::kOptionalTensorList, MakePayload(std::move(v))) {}
IValue::IValue(intrusive_ptr<CustomClassHolder> v) {
  if (v) {
    new (&v_.as_object) intrusive_ptr<CustomClassHolder>(std::move(v));
    tag_ = Tag::kObject;
  }
}

IValue IValue::GenericList(std::vector<IValue> elements) {
  return IValue(Tag::kGenericList, MakePayload<std::vector<IValue>, 0>(std::move(elements)));
}

IValue IValue::Tuple(std::vector<IValue> elements) {
  return IValue(Tag::kTuple, MakePayload<std::vector<IValue>, 1>(std::move(elements)));
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

const intrusive_ptr<CustomClassHolder>& IValue::toObject() const {
  if (OPREG_UNLIKELY(tag_ != Tag::kObject)) ThrowTagMismatch(Tag::kObject);
  return v_.as_object;
}

const std::string& IValue::toStringRef() const { return PayloadValue<std::string>(Tag::kString); }
const std::vector<int64_t>& IValue::toIntList() const {
  return PayloadValue<std::vector<int64_t>>(Tag::kIntList);
}
const std::vector<double>& IValue::toDoubleList() const {
  return PayloadValue<std::vector<double>>(Tag::kDoubleList);
}
const std::vector<bool>& IValue::toBoolList() const {
  return PayloadValue<std::vector<bool>>(Tag::kBoolList);
}
const std::vector<std::complex<double>>& IValue::toComplexList() const {
  return PayloadValue<std::vector<std::complex<double>>>(Tag::kComplexList);
}
const std::vector<std::string>& IValue::toStringList() const {
  return PayloadValue<std::vector<std::string>>(Tag::kStringList);
}
const std::vector<Tensor>& IValue::toTensorList() const {
  return PayloadValue<std::vector<Tensor>>(Tag::kTensorList);
}
const std::vector<std::optional<Tensor>>& IValue::toOptionalTensorList() const {
  return PayloadValue<std::vector<std::optional<Tensor>>>(Tag::kOptionalTensorList);
}
const std::vector<IValue>& IValue::toGenericList() const {
  return PayloadValue<std::vector<IValue>, 0>(Tag::kGenericList);
}
const std::vector<IValue>& IValue::toTuple() const {
  return PayloadValue<std::vector<IValue>, 1>(Tag::kTuple);
}

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
