// opreg::torch_stable: <torch/headeronly/core/ScalarType.h>. torch::headeronly::ScalarType with
// c10::ScalarType's values (the codes the stable ABI passes), toString, elementSize and the
// type-to-ScalarType map of the types these headers define. Header-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>

#include "../util/BFloat16.h"
#include "../util/Float8_e4m3fn.h"
#include "../util/Float8_e4m3fnuz.h"
#include "../util/Float8_e5m2.h"
#include "../util/Float8_e5m2fnuz.h"
#include "../util/Half.h"

namespace c10 {

enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  ComplexHalf = 8,
  ComplexFloat = 9,
  ComplexDouble = 10,
  Bool = 11,
  QInt8 = 12,
  QUInt8 = 13,
  QInt32 = 14,
  BFloat16 = 15,
  QUInt4x2 = 16,
  QUInt2x4 = 17,
  Bits1x8 = 18,
  Bits2x4 = 19,
  Bits4x2 = 20,
  Bits8 = 21,
  Bits16 = 22,
  Float8_e5m2 = 23,
  Float8_e4m3fn = 24,
  Float8_e5m2fnuz = 25,
  Float8_e4m3fnuz = 26,
  UInt16 = 27,
  UInt32 = 28,
  UInt64 = 29,
  UInt1 = 30,
  UInt2 = 31,
  UInt3 = 32,
  UInt4 = 33,
  UInt5 = 34,
  UInt6 = 35,
  UInt7 = 36,
  Int1 = 37,
  Int2 = 38,
  Int3 = 39,
  Int4 = 40,
  Int5 = 41,
  Int6 = 42,
  Int7 = 43,
  Float8_e8m0fnu = 44,
  Float4_e2m1fn_x2 = 45,
  Undefined = 46,
  NumOptions
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
constexpr ScalarType kUInt16 = ScalarType::UInt16;
constexpr ScalarType kUInt32 = ScalarType::UInt32;
constexpr ScalarType kUInt64 = ScalarType::UInt64;

inline const char* toString(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int";
    case ScalarType::Long: return "Long";
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::Double: return "Double";
    case ScalarType::ComplexHalf: return "ComplexHalf";
    case ScalarType::ComplexFloat: return "ComplexFloat";
    case ScalarType::ComplexDouble: return "ComplexDouble";
    case ScalarType::Bool: return "Bool";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::Float8_e5m2: return "Float8_e5m2";
    case ScalarType::Float8_e4m3fn: return "Float8_e4m3fn";
    case ScalarType::Float8_e5m2fnuz: return "Float8_e5m2fnuz";
    case ScalarType::Float8_e4m3fnuz: return "Float8_e4m3fnuz";
    case ScalarType::UInt16: return "UInt16";
    case ScalarType::UInt32: return "UInt32";
    case ScalarType::UInt64: return "UInt64";
    case ScalarType::Float8_e8m0fnu: return "Float8_e8m0fnu";
    case ScalarType::Float4_e2m1fn_x2: return "Float4_e2m1fn_x2";
    default: return "UNKNOWN_SCALAR";
  }
}

inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

// Bytes per element (0 for the quantized and bit types these headers do not size).
constexpr size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool:
    case ScalarType::Float8_e5m2: case ScalarType::Float8_e4m3fn:
    case ScalarType::Float8_e5m2fnuz: case ScalarType::Float8_e4m3fnuz:
    case ScalarType::Float8_e8m0fnu: case ScalarType::Float4_e2m1fn_x2:
      return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16:
    case ScalarType::UInt16:
      return 2;
    case ScalarType::Int: case ScalarType::Float: case ScalarType::UInt32:
    case ScalarType::ComplexHalf:
      return 4;
    case ScalarType::Long: case ScalarType::Double: case ScalarType::UInt64:
    case ScalarType::ComplexFloat:
      return 8;
    case ScalarType::ComplexDouble:
      return 16;
    default:
      return 0;
  }
}

constexpr bool isFloatingType(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half ||
         t == ScalarType::BFloat16 || t == ScalarType::Float8_e5m2 ||
         t == ScalarType::Float8_e4m3fn || t == ScalarType::Float8_e5m2fnuz ||
         t == ScalarType::Float8_e4m3fnuz || t == ScalarType::Float8_e8m0fnu;
}

constexpr bool isIntegralType(ScalarType t, bool include_bool) {
  return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Short ||
         t == ScalarType::Int || t == ScalarType::Long || t == ScalarType::UInt16 ||
         t == ScalarType::UInt32 || t == ScalarType::UInt64 ||
         (include_bool && t == ScalarType::Bool);
}

// The ScalarType of a C++ element type (CppTypeToScalarType<float>::value == kFloat).
template <class T>
struct CppTypeToScalarType;
#define OPREG_STABLE_CPP_TYPE(type, name)                       \
  template <>                                                   \
  struct CppTypeToScalarType<type> {                            \
    static constexpr ScalarType value = ScalarType::name;       \
  }
OPREG_STABLE_CPP_TYPE(uint8_t, Byte);
OPREG_STABLE_CPP_TYPE(int8_t, Char);
OPREG_STABLE_CPP_TYPE(int16_t, Short);
OPREG_STABLE_CPP_TYPE(int32_t, Int);
OPREG_STABLE_CPP_TYPE(int64_t, Long);
OPREG_STABLE_CPP_TYPE(uint16_t, UInt16);
OPREG_STABLE_CPP_TYPE(uint32_t, UInt32);
OPREG_STABLE_CPP_TYPE(uint64_t, UInt64);
OPREG_STABLE_CPP_TYPE(float, Float);
OPREG_STABLE_CPP_TYPE(double, Double);
OPREG_STABLE_CPP_TYPE(bool, Bool);
OPREG_STABLE_CPP_TYPE(c10::Half, Half);
OPREG_STABLE_CPP_TYPE(c10::BFloat16, BFloat16);
OPREG_STABLE_CPP_TYPE(c10::Float8_e4m3fn, Float8_e4m3fn);
OPREG_STABLE_CPP_TYPE(c10::Float8_e5m2, Float8_e5m2);
OPREG_STABLE_CPP_TYPE(c10::Float8_e4m3fnuz, Float8_e4m3fnuz);
OPREG_STABLE_CPP_TYPE(c10::Float8_e5m2fnuz, Float8_e5m2fnuz);
#undef OPREG_STABLE_CPP_TYPE

namespace impl {
// The C++ element type of a ScalarType (ScalarTypeToCPPTypeT<ScalarType::Half> is c10::Half):
// what the THO_DISPATCH macros bind scalar_t to.
template <ScalarType>
struct ScalarTypeToCPPType;
#define OPREG_STABLE_SCALAR_TO_CPP(cpp_type, name) \
  template <>                                     \
  struct ScalarTypeToCPPType<ScalarType::name> {  \
    using type = cpp_type;                        \
  }
OPREG_STABLE_SCALAR_TO_CPP(uint8_t, Byte);
OPREG_STABLE_SCALAR_TO_CPP(int8_t, Char);
OPREG_STABLE_SCALAR_TO_CPP(int16_t, Short);
OPREG_STABLE_SCALAR_TO_CPP(int32_t, Int);
OPREG_STABLE_SCALAR_TO_CPP(int64_t, Long);
OPREG_STABLE_SCALAR_TO_CPP(uint16_t, UInt16);
OPREG_STABLE_SCALAR_TO_CPP(uint32_t, UInt32);
OPREG_STABLE_SCALAR_TO_CPP(uint64_t, UInt64);
OPREG_STABLE_SCALAR_TO_CPP(float, Float);
OPREG_STABLE_SCALAR_TO_CPP(double, Double);
OPREG_STABLE_SCALAR_TO_CPP(bool, Bool);
OPREG_STABLE_SCALAR_TO_CPP(c10::Half, Half);
OPREG_STABLE_SCALAR_TO_CPP(c10::BFloat16, BFloat16);
OPREG_STABLE_SCALAR_TO_CPP(c10::Float8_e4m3fn, Float8_e4m3fn);
OPREG_STABLE_SCALAR_TO_CPP(c10::Float8_e5m2, Float8_e5m2);
OPREG_STABLE_SCALAR_TO_CPP(c10::Float8_e4m3fnuz, Float8_e4m3fnuz);
OPREG_STABLE_SCALAR_TO_CPP(c10::Float8_e5m2fnuz, Float8_e5m2fnuz);
#undef OPREG_STABLE_SCALAR_TO_CPP
template <ScalarType N>
using ScalarTypeToCPPTypeT = typename ScalarTypeToCPPType<N>::type;
}  // namespace impl

}  // namespace c10

namespace torch::headeronly {
namespace impl {
using c10::impl::ScalarTypeToCPPType;
using c10::impl::ScalarTypeToCPPTypeT;
}  // namespace impl
using c10::CppTypeToScalarType;
using c10::elementSize;
using c10::isFloatingType;
using c10::isIntegralType;
using c10::ScalarType;
using c10::toString;
using c10::kBFloat16;
using c10::kBool;
using c10::kByte;
using c10::kChar;
using c10::kDouble;
using c10::kFloat;
using c10::kFloat8_e4m3fn;
using c10::kFloat8_e5m2;
using c10::kHalf;
using c10::kInt;
using c10::kLong;
using c10::kShort;
using c10::kUInt16;
using c10::kUInt32;
using c10::kUInt64;
}  // namespace torch::headeronly
