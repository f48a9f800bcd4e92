// IValue: the boxed value that travels through the dispatcher's Stack (PyTorch's convention):
// None, Tensor, int, float, complex, bool, str, Device, typed lists, generic lists, tuples and
// custom-class objects.
//
// Representation: a std::variant whose scalar alternatives (int64, double, complex, bool,
// Device) are stored inline and whose heavier ones (strings, lists, tuples) are immutable,
// intrusively counted payloads. Copying an IValue is therefore O(1) (a count increment at most)
// and moving never allocates; a moved-from IValue is None.
//
// Errors: toX() on a value of another tag throws opreg::Error (kType):
// "expected Int but got Double".
//
// Thread safety: an IValue is a value type; concurrent reads of one IValue (or of copies sharing
// a payload) are safe, as payloads are never mutated after construction.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "opreg/core/custom_class.h"
#include "opreg/core/device.h"
#include "opreg/core/intrusive_ptr.h"
#include "opreg/core/tensor.h"

namespace opreg {

class IValue;

namespace detail {
// An immutable, intrusively counted payload. `Kind` only tells GenericList from Tuple apart.
template <class T, int Kind = 0>
struct IValuePayload : intrusive_ptr_target {
  explicit IValuePayload(T v) : value(std::move(v)) {}
  T value;
};
}  // namespace detail

// PyTorch's rule for printing a double in schemas (IValue operator<<): "<int>." when the value
// is normal or zero, integral and round-trips through int64 (1.0 -> "1.", -0.0 -> "0."),
// otherwise printf("%.17g") (0.1 -> "0.10000000000000001", inf -> "inf", nan -> "nan").
std::string FormatDoubleTorch(double value);

class IValue {
 public:
  // The alternatives, in variant-index order.
  enum class Tag : uint8_t {
    kNone,
    kTensor,
    kInt,
    kDouble,
    kComplex,
    kBool,
    kString,
    kDevice,
    kIntList,
    kDoubleList,
    kBoolList,
    kComplexList,
    kStringList,
    kTensorList,
    kOptionalTensorList,
    kGenericList,
    kTuple,
    kObject,
  };

  // ---- Construction ----
  IValue() = default;                     // None.
  IValue(std::nullopt_t) {}               // NOLINT: None.
  IValue(Tensor t) : v_(std::move(t)) {}  // NOLINT: an undefined Tensor stays a Tensor.
  // Every integral type except bool -> kInt.
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IValue(T v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  // Exactly bool -> kBool (a template so that pointers never decay to bool).
  template <class T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  IValue(T v) : v_(static_cast<bool>(v)) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  IValue(T v) : v_(static_cast<double>(v)) {}             // NOLINT
  IValue(std::complex<double> v) : v_(v) {}               // NOLINT
  IValue(std::string v);                                  // NOLINT
  IValue(std::string_view v) : IValue(std::string(v)) {}  // NOLINT
  IValue(const char* v) : IValue(std::string(v)) {}       // NOLINT
  IValue(Device v) : v_(v) {}                             // NOLINT
  IValue(std::vector<int64_t> v);                         // NOLINT
  IValue(std::vector<double> v);                          // NOLINT
  IValue(std::vector<bool> v);                            // NOLINT
  IValue(std::vector<std::complex<double>> v);            // NOLINT
  IValue(std::vector<std::string> v);                     // NOLINT
  IValue(std::vector<Tensor> v);                          // NOLINT
  IValue(std::vector<std::optional<Tensor>> v);           // NOLINT
  IValue(intrusive_ptr<CustomClassHolder> v);             // NOLINT: null -> None.
  template <class T, std::enable_if_t<std::is_base_of_v<CustomClassHolder, T> &&
                                          !std::is_same_v<T, CustomClassHolder>,
                                      int> = 0>
  IValue(intrusive_ptr<T> v)  // NOLINT
      : IValue(intrusive_ptr<CustomClassHolder>(std::move(v))) {}
  // None when empty, else IValue(*v). Only for the T an IValue can hold.
  template <class T, std::enable_if_t<std::is_constructible_v<IValue, T>, int> = 0>
  IValue(std::optional<T> v) {  // NOLINT
    if (v.has_value()) *this = IValue(std::move(*v));
  }
  static IValue GenericList(std::vector<IValue> elements);
  static IValue Tuple(std::vector<IValue> elements);

  IValue(const IValue&) = default;
  IValue& operator=(const IValue&) = default;
  IValue(IValue&& other) noexcept : v_(std::move(other.v_)) { other.v_.emplace<0>(); }
  IValue& operator=(IValue&& other) noexcept {
    if (this != &other) {
      v_ = std::move(other.v_);
      other.v_.emplace<0>();
    }
    return *this;
  }
  ~IValue() = default;

  // ---- Inspection ----
  Tag tag() const { return static_cast<Tag>(v_.index()); }
  // "None", "Tensor", "Int", "Double", "Complex", "Bool", "String", "Device", "IntList",
  // "DoubleList", "BoolList", "ComplexList", "StringList", "TensorList", "OptionalTensorList",
  // "GenericList", "Tuple", "Object".
  static std::string_view TagName(Tag tag);
  std::string_view TagName() const { return TagName(tag()); }

  bool isNone() const { return tag() == Tag::kNone; }
  bool isTensor() const { return tag() == Tag::kTensor; }
  bool isInt() const { return tag() == Tag::kInt; }
  bool isDouble() const { return tag() == Tag::kDouble; }
  bool isComplex() const { return tag() == Tag::kComplex; }
  bool isBool() const { return tag() == Tag::kBool; }
  bool isString() const { return tag() == Tag::kString; }
  bool isDevice() const { return tag() == Tag::kDevice; }
  bool isIntList() const { return tag() == Tag::kIntList; }
  bool isDoubleList() const { return tag() == Tag::kDoubleList; }
  bool isBoolList() const { return tag() == Tag::kBoolList; }
  bool isComplexList() const { return tag() == Tag::kComplexList; }
  bool isStringList() const { return tag() == Tag::kStringList; }
  bool isTensorList() const { return tag() == Tag::kTensorList; }
  bool isOptionalTensorList() const { return tag() == Tag::kOptionalTensorList; }
  bool isGenericList() const { return tag() == Tag::kGenericList; }
  bool isTuple() const { return tag() == Tag::kTuple; }
  bool isObject() const { return tag() == Tag::kObject; }
  // Any of the list tags (typed or generic; not Tuple).
  bool isList() const { return tag() >= Tag::kIntList && tag() <= Tag::kGenericList; }
  // int, double, bool or complex (PyTorch's Scalar).
  bool isScalar() const { return isInt() || isDouble() || isBool() || isComplex(); }

  // ---- Access (kType error on a tag mismatch) ----
  const Tensor& toTensor() const&;
  Tensor toTensor() &&;
  int64_t toInt() const;
  double toDouble() const;
  std::complex<double> toComplex() const;
  bool toBool() const;
  const std::string& toStringRef() const;
  std::string_view toStringView() const { return toStringRef(); }
  Device toDevice() const;
  const std::vector<int64_t>& toIntList() const;
  const std::vector<double>& toDoubleList() const;
  const std::vector<bool>& toBoolList() const;
  const std::vector<std::complex<double>>& toComplexList() const;
  const std::vector<std::string>& toStringList() const;
  const std::vector<Tensor>& toTensorList() const;
  const std::vector<std::optional<Tensor>>& toOptionalTensorList() const;
  const std::vector<IValue>& toGenericList() const;
  const std::vector<IValue>& toTuple() const;
  const intrusive_ptr<CustomClassHolder>& toObject() const;
  // The object as T; kType error when it is not a T.
  template <class T>
  intrusive_ptr<T> toCustomClass() const {
    T* p = dynamic_cast<T*>(toObject().get());
    OPREG_CHECK_TYPE(p != nullptr, "expected custom class object of another type but got ",
                     toObject()->class_name());
    return intrusive_ptr<T>(p);
  }
  // A Scalar (int, bool or double) as double; kType error otherwise.
  double toScalarDouble() const;

  // Structural equality: same tag and equal contents; tensors and objects by identity; doubles
  // by ==, so NaN != NaN.
  friend bool operator==(const IValue& a, const IValue& b);
  friend bool operator!=(const IValue& a, const IValue& b) { return !(a == b); }

 private:
  template <class T, int Kind = 0>
  using Payload = intrusive_ptr<detail::IValuePayload<T, Kind>>;

  [[noreturn]] void ThrowTagMismatch(Tag expected) const;

  std::variant<std::monostate,                               // kNone
               Tensor,                                       // kTensor
               int64_t,                                      // kInt
               double,                                       // kDouble
               std::complex<double>,                         // kComplex
               bool,                                         // kBool
               Payload<std::string>,                         // kString
               Device,                                       // kDevice
               Payload<std::vector<int64_t>>,                // kIntList
               Payload<std::vector<double>>,                 // kDoubleList
               Payload<std::vector<bool>>,                   // kBoolList
               Payload<std::vector<std::complex<double>>>,   // kComplexList
               Payload<std::vector<std::string>>,            // kStringList
               Payload<std::vector<Tensor>>,                 // kTensorList
               Payload<std::vector<std::optional<Tensor>>>,  // kOptionalTensorList
               Payload<std::vector<IValue>, 0>,              // kGenericList
               Payload<std::vector<IValue>, 1>,              // kTuple
               intrusive_ptr<CustomClassHolder>>             // kObject
      v_;
};

// The boxed calling convention: arguments pushed in schema order, replaced by the returns.
using Stack = std::vector<IValue>;

// PyTorch's IValue printing as used by schema printing (see FormatDoubleTorch): None, True /
// False, ints in decimal, complex as "<re>+<|im|>j", strings unquoted, Device as "cuda:0", lists
// "[a, b]", tuples "(a, b)" ("(a,)" for one element), tensors as Tensor::ToString(), objects as
// "<Name object at 0x...>".
std::ostream& operator<<(std::ostream& os, const IValue& value);

}  // namespace opreg
