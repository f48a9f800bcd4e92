// IValue: the boxed value that travels through the dispatcher's Stack (PyTorch's convention):
// None, Tensor, int, float, complex, bool, str, Device, typed lists, generic lists, tuples and
// custom-class objects.
//
// Representation: a tag and a union (as libtorch's IValue), 24 bytes. Scalars (int64, double,
// complex, bool, Device) are stored inline; a Tensor is its handle; strings, lists and tuples
// are immutable, intrusively counted payloads, held by one raw counted pointer. Copying an
// IValue is O(1) (a count increment at most), moving never allocates, and destroying one that
// holds no counted reference (None, scalars) costs one bit test: a moved-from IValue is None.
// (A std::variant of the same alternatives cost a jump-table visit per destruction, the largest
// item of the boxed call path.)
//
// Errors: toX() on a value of another tag throws opreg::Error (kType):
// "expected Int but got Double".
//
// Thread safety: an IValue is a value type; concurrent reads of one IValue (or of copies sharing
// a payload) are safe, as payloads are never mutated after construction.
#pragma once

#include <complex>
#include <cstring>
#include <new>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "opreg/core/custom_class.h"
#include "opreg/core/device.h"
#include "opreg/core/intrusive_ptr.h"
#include "opreg/core/macros.h"
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
  IValue() noexcept {}                     // None.
  IValue(std::nullopt_t) noexcept {}       // NOLINT: None.
  IValue(Tensor t) noexcept : tag_(Tag::kTensor) {  // NOLINT: an undefined Tensor stays a Tensor.
    new (&v_.as_tensor) Tensor(std::move(t));
  }
  // Every integral type except bool -> kInt.
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IValue(T v) noexcept : tag_(Tag::kInt) {  // NOLINT
    v_.as_int = static_cast<int64_t>(v);
  }
  // Exactly bool -> kBool (a template so that pointers never decay to bool).
  template <class T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  IValue(T v) noexcept : tag_(Tag::kBool) {  // NOLINT
    v_.as_bool = static_cast<bool>(v);
  }
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  IValue(T v) noexcept : tag_(Tag::kDouble) {  // NOLINT
    v_.as_double = static_cast<double>(v);
  }
  IValue(std::complex<double> v) noexcept : tag_(Tag::kComplex) {  // NOLINT
    new (&v_.as_complex) std::complex<double>(v);
  }
  IValue(std::string v);                                  // NOLINT
  IValue(std::string_view v) : IValue(std::string(v)) {}  // NOLINT
  IValue(const char* v) : IValue(std::string(v)) {}       // NOLINT
  IValue(Device v) noexcept : tag_(Tag::kDevice) {        // NOLINT
    v_.as_device = v;
  }
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

  IValue(const IValue& other) noexcept : tag_(other.tag_) { CopyValue(other); }
  IValue& operator=(const IValue& other) noexcept {
    if (this != &other) {
      IValue copy(other);
      *this = std::move(copy);
    }
    return *this;
  }
  IValue(IValue&& other) noexcept : tag_(other.tag_) { TakeValue(&other); }
  IValue& operator=(IValue&& other) noexcept {
    if (this != &other) {
      Reset();
      tag_ = other.tag_;
      TakeValue(&other);
    }
    return *this;
  }
  ~IValue() { Reset(); }

  // ---- Inspection ----
  Tag tag() const { return tag_; }
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
  const Tensor& toTensor() const& {
    if (OPREG_UNLIKELY(tag_ != Tag::kTensor)) ThrowTagMismatch(Tag::kTensor);
    return v_.as_tensor;
  }
  // Moves the tensor out; this IValue becomes None.
  Tensor toTensor() && {
    if (OPREG_UNLIKELY(tag_ != Tag::kTensor)) ThrowTagMismatch(Tag::kTensor);
    Tensor t = std::move(v_.as_tensor);
    v_.as_tensor.~Tensor();
    tag_ = Tag::kNone;
    return t;
  }
  int64_t toInt() const {
    if (OPREG_UNLIKELY(tag_ != Tag::kInt)) ThrowTagMismatch(Tag::kInt);
    return v_.as_int;
  }
  double toDouble() const {
    if (OPREG_UNLIKELY(tag_ != Tag::kDouble)) ThrowTagMismatch(Tag::kDouble);
    return v_.as_double;
  }
  std::complex<double> toComplex() const {
    if (OPREG_UNLIKELY(tag_ != Tag::kComplex)) ThrowTagMismatch(Tag::kComplex);
    return v_.as_complex;
  }
  bool toBool() const {
    if (OPREG_UNLIKELY(tag_ != Tag::kBool)) ThrowTagMismatch(Tag::kBool);
    return v_.as_bool;
  }
  const std::string& toStringRef() const;
  std::string_view toStringView() const { return toStringRef(); }
  Device toDevice() const {
    if (OPREG_UNLIKELY(tag_ != Tag::kDevice)) ThrowTagMismatch(Tag::kDevice);
    return v_.as_device;
  }
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
  // The tags whose value is a counted payload (strings, lists, tuples): one owned reference in
  // v_.as_payload. kTensor and kObject are counted too, through their handle members.
  static constexpr uint32_t kPayloadTags =
      (1u << static_cast<int>(Tag::kString)) | (1u << static_cast<int>(Tag::kIntList)) |
      (1u << static_cast<int>(Tag::kDoubleList)) | (1u << static_cast<int>(Tag::kBoolList)) |
      (1u << static_cast<int>(Tag::kComplexList)) | (1u << static_cast<int>(Tag::kStringList)) |
      (1u << static_cast<int>(Tag::kTensorList)) |
      (1u << static_cast<int>(Tag::kOptionalTensorList)) |
      (1u << static_cast<int>(Tag::kGenericList)) | (1u << static_cast<int>(Tag::kTuple));
  static constexpr uint32_t kCountedTags = kPayloadTags |
                                           (1u << static_cast<int>(Tag::kTensor)) |
                                           (1u << static_cast<int>(Tag::kObject));
  static bool IsCounted(Tag t) { return (kCountedTags >> static_cast<int>(t)) & 1u; }

  union Value {
    Value() noexcept : as_int(0) {}
    ~Value() {}
    int64_t as_int;
    double as_double;
    std::complex<double> as_complex;
    bool as_bool;
    Device as_device;
    Tensor as_tensor;                           // kTensor
    intrusive_ptr<CustomClassHolder> as_object;  // kObject (never null)
    intrusive_ptr_target* as_payload;            // kPayloadTags: one owned reference
  };

  // Payload constructors: `payload` carries the reference this IValue now owns.
  IValue(Tag tag, intrusive_ptr_target* payload) noexcept : tag_(tag) {
    v_.as_payload = payload;
  }

  // Copies other's value into v_ (tag_ already set to other.tag_).
  void CopyValue(const IValue& other) noexcept {
    if (!IsCounted(tag_)) {
      CopyBits(other.v_);
    } else if (tag_ == Tag::kTensor) {
      new (&v_.as_tensor) Tensor(other.v_.as_tensor);
    } else if (tag_ == Tag::kObject) {
      new (&v_.as_object) intrusive_ptr<CustomClassHolder>(other.v_.as_object);
    } else {
      v_.as_payload = other.v_.as_payload;
      IntrusiveIncRef(v_.as_payload);
    }
  }
  // Moves other's value into v_ (tag_ already set); other becomes None.
  void TakeValue(IValue* other) noexcept {
    if (tag_ == Tag::kTensor) {
      new (&v_.as_tensor) Tensor(std::move(other->v_.as_tensor));
      other->v_.as_tensor.~Tensor();
    } else if (tag_ == Tag::kObject) {
      new (&v_.as_object) intrusive_ptr<CustomClassHolder>(std::move(other->v_.as_object));
      other->v_.as_object.~intrusive_ptr<CustomClassHolder>();
    } else {
      CopyBits(other->v_);  // scalars, or the payload pointer and its reference
    }
    other->tag_ = Tag::kNone;
  }
  // Drops the value's reference, if any; the tag is left for the caller to set.
  void Reset() noexcept {
    if (OPREG_LIKELY(!IsCounted(tag_))) return;
    if (tag_ == Tag::kTensor) {
      v_.as_tensor.~Tensor();
    } else if (tag_ == Tag::kObject) {
      v_.as_object.~intrusive_ptr<CustomClassHolder>();
    } else {
      IntrusiveDecRef(v_.as_payload);
    }
    tag_ = Tag::kNone;
  }
  // Copies the union's bytes: for the trivially copyable alternatives, and the payload
  // pointer (whose reference the caller accounts for).
  void CopyBits(const Value& from) noexcept {
    std::memcpy(static_cast<void*>(&v_), static_cast<const void*>(&from), sizeof(Value));
  }

  template <class T, int Kind = 0>
  const T& PayloadValue(Tag expected) const {
    if (OPREG_UNLIKELY(tag_ != expected)) ThrowTagMismatch(expected);
    return static_cast<const detail::IValuePayload<T, Kind>*>(v_.as_payload)->value;
  }

  [[noreturn]] void ThrowTagMismatch(Tag expected) const;

  Value v_;
  Tag tag_ = Tag::kNone;
};

// The boxed calling convention: arguments pushed in schema order, replaced by the returns.
using Stack = std::vector<IValue>;

// PyTorch's IValue printing as used by schema printing (see FormatDoubleTorch): None, True /
// False, ints in decimal, complex as "<re>+<|im|>j", strings unquoted, Device as "cuda:0", lists
// "[a, b]", tuples "(a, b)" ("(a,)" for one element), tensors as Tensor::ToString(), objects as
// "<Name object at 0x...>".
std::ostream& operator<<(std::ostream& os, const IValue& value);

}  // namespace opreg
