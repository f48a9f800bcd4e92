// c10::ScalarType with libtorch's integer codes, its constants (at::kFloat, torch::kFloat16,
// ...), the element types (at::Half, c10::BFloat16, c10::Float8_e4m3fn, ...) and
// caffe2::TypeMeta (what Tensor::dtype() returns), mapped onto opreg's DType.
//
// Only the ScalarTypes opreg tensors can hold convert to DType; the others (complex, quantized,
// unsigned > 8 bits) exist so that code naming them compiles, and ToDType names them in a
// kType error.
//
// Thread safety: all functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "opreg/core/dtype.h"
#include "opreg/core/half.h"
#include "opreg/core/torch_scalar_types.h"
#include "opreg/torch_compat/float8_fnuz.h"
#include "opreg/torch_compat/half_arithmetic.h"

namespace c10 {

using Half = ::opreg::Half;
using BFloat16 = ::opreg::BFloat16;
using Float8_e4m3fn = ::opreg::Float8E4M3FN;
using Float8_e5m2 = ::opreg::Float8E5M2;

// PyTorch's codes (c10/core/ScalarType.h), so boxed ScalarType arguments need no translation.
// Only the types opreg tensors hold have a DType; the fnuz float8 and unsigned types have C++
// element types (so code naming them compiles) but no tensors.
enum class ScalarType : int8_t {
#define OPREG_TORCH_SCALAR_TYPE_ENUMERATOR(e, code, name, legacy) e = code,
  OPREG_FORALL_TORCH_SCALAR_TYPES(OPREG_TORCH_SCALAR_TYPE_ENUMERATOR)  // torch_scalar_types.h
#undef OPREG_TORCH_SCALAR_TYPE_ENUMERATOR
  Undefined,
};

constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat8_e5m2 = ScalarType::Float8_e5m2;
constexpr ScalarType kFloat8_e4m3fn = ScalarType::Float8_e4m3fn;
constexpr ScalarType kFloat8_e4m3fnuz = ScalarType::Float8_e4m3fnuz;
constexpr ScalarType kFloat8_e5m2fnuz = ScalarType::Float8_e5m2fnuz;
constexpr ScalarType kUInt16 = ScalarType::UInt16;
constexpr ScalarType kUInt32 = ScalarType::UInt32;
constexpr ScalarType kUInt64 = ScalarType::UInt64;
constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat;
constexpr ScalarType kComplexDouble = ScalarType::ComplexDouble;
// torch's dtype-style aliases.
constexpr ScalarType kUInt8 = ScalarType::Byte;
constexpr ScalarType kInt8 = ScalarType::Char;
constexpr ScalarType kInt16 = ScalarType::Short;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kFloat64 = ScalarType::Double;

// "Float", "BFloat16", ... (torch's toString); "UNKNOWN_SCALAR" for other values.
const char* toString(ScalarType t);
std::ostream& operator<<(std::ostream& os, ScalarType t);
// Bytes per element; kType error for types without a fixed element size here.
size_t elementSize(ScalarType t);
bool isFloatingType(ScalarType t);
bool isIntegralType(ScalarType t, bool include_bool);
bool isReducedFloatingType(ScalarType t);
bool isFloat8Type(ScalarType t);
bool isComplexType(ScalarType t);
// The dtype of a binary op on tensors of types a and b (torch's promoteTypes): bool < integers
// < floating types, the wider of a kind, uint8 with a signed type at least int16, half with
// bfloat16 float. kType error, as in torch, for float8 or uint16/32/64 with another type (other
// than a floating one, for the unsigned), and for types without an element size here.
ScalarType promoteTypes(ScalarType a, ScalarType b);

// The opreg DType of a ScalarType; kType error naming the type when opreg has none.
::opreg::DType ToDType(ScalarType t);
inline ScalarType FromDType(::opreg::DType d) {
  return static_cast<ScalarType>(::opreg::TorchScalarTypeCode(d));
}

// The C++ element type of a ScalarType (AT_DISPATCH's scalar_t) and the reverse.
namespace impl {
template <ScalarType kType>
struct ScalarTypeToCPPType;
#define OPREG_TORCH_COMPAT_ELEMENT_TYPES_(_) \
  _(uint8_t, Byte)                           \
  _(int8_t, Char)                            \
  _(int16_t, Short)                          \
  _(int32_t, Int)                            \
  _(int64_t, Long)                           \
  _(::c10::Half, Half)                       \
  _(float, Float)                            \
  _(double, Double)                          \
  _(bool, Bool)                              \
  _(::c10::BFloat16, BFloat16)               \
  _(::c10::Float8_e5m2, Float8_e5m2)         \
  _(::c10::Float8_e4m3fn, Float8_e4m3fn)     \
  _(::c10::Float8_e5m2fnuz, Float8_e5m2fnuz) \
  _(::c10::Float8_e4m3fnuz, Float8_e4m3fnuz) \
  _(uint16_t, UInt16)                        \
  _(uint32_t, UInt32)                        \
  _(uint64_t, UInt64)
#define OPREG_TORCH_COMPAT_TO_CPP_(cpp, name)    \
  template <>                                    \
  struct ScalarTypeToCPPType<ScalarType::name> { \
    using type = cpp;                            \
  };
OPREG_TORCH_COMPAT_ELEMENT_TYPES_(OPREG_TORCH_COMPAT_TO_CPP_)
#undef OPREG_TORCH_COMPAT_TO_CPP_
template <ScalarType kType>
using ScalarTypeToCPPTypeT = typename ScalarTypeToCPPType<kType>::type;
}  // namespace impl

template <class T>
struct CppTypeToScalarType;
#define OPREG_TORCH_COMPAT_FROM_CPP_(cpp, name) \
  template <>                                   \
  struct CppTypeToScalarType<cpp> : std::integral_constant<ScalarType, ScalarType::name> {};
OPREG_TORCH_COMPAT_ELEMENT_TYPES_(OPREG_TORCH_COMPAT_FROM_CPP_)
#undef OPREG_TORCH_COMPAT_FROM_CPP_

// What Tensor::dtype() and TensorOptions::dtype() return: a ScalarType with the TypeMeta
// accessors kernel code uses. Compares with ScalarType (`t.dtype() == at::kHalf`).
class TypeMeta {
 public:
  constexpr TypeMeta() = default;
  constexpr TypeMeta(ScalarType t) : type_(t) {}  // NOLINT: implicit, as in c10.
  constexpr ScalarType toScalarType() const { return type_; }
  size_t itemsize() const { return elementSize(type_); }
  std::string_view name() const { return toString(type_); }
  template <class T>
  static TypeMeta Make() {
    return TypeMeta(CppTypeToScalarType<T>::value);
  }
  friend constexpr bool operator==(TypeMeta a, TypeMeta b) { return a.type_ == b.type_; }
  friend constexpr bool operator!=(TypeMeta a, TypeMeta b) { return a.type_ != b.type_; }
  friend constexpr bool operator==(TypeMeta a, ScalarType b) { return a.type_ == b; }
  friend constexpr bool operator!=(TypeMeta a, ScalarType b) { return a.type_ != b; }
  friend constexpr bool operator==(ScalarType a, TypeMeta b) { return a == b.type_; }
  friend constexpr bool operator!=(ScalarType a, TypeMeta b) { return a != b.type_; }

 private:
  ScalarType type_ = ScalarType::Float;
};
std::ostream& operator<<(std::ostream& os, TypeMeta t);
inline ScalarType typeMetaToScalarType(TypeMeta t) { return t.toScalarType(); }
inline TypeMeta scalarTypeToTypeMeta(ScalarType t) { return TypeMeta(t); }

}  // namespace c10

namespace caffe2 {
using TypeMeta = ::c10::TypeMeta;
}  // namespace caffe2

// libtorch >= 2.9 defines these types in torch/headeronly and re-exports them from c10.
namespace torch::headeronly {
using ::c10::BFloat16;
using ::c10::Float8_e4m3fn;
using ::c10::Float8_e4m3fnuz;
using ::c10::Float8_e5m2;
using ::c10::Float8_e5m2fnuz;
using ::c10::Half;
using ::c10::ScalarType;
}  // namespace torch::headeronly
