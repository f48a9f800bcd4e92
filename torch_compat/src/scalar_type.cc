// ScalarType names and properties, and the mapping to opreg's DType.
#include "opreg/torch_compat/scalar_type.h"

#include <algorithm>

#include "opreg/core/error.h"
#include "opreg/torch_compat/macros.h"

namespace c10 {

const char* toString(ScalarType t) {
  switch (t) {
#define OPREG_CASE_(e, code, name, legacy) \
  case ScalarType::e:                      \
    return #e;
    OPREG_FORALL_TORCH_SCALAR_TYPES(OPREG_CASE_)  // torch_scalar_types.h
#undef OPREG_CASE_
    case ScalarType::Undefined:
      return "Undefined";
  }
  return "UNKNOWN_SCALAR";
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }
std::ostream& operator<<(std::ostream& os, TypeMeta t) { return os << t.name(); }

::opreg::DType ToDType(ScalarType t) {
  std::optional<::opreg::DType> d = ::opreg::DTypeFromTorchScalarTypeCode(static_cast<int>(t));
  TORCH_CHECK_TYPE(d.has_value(), "ScalarType ", toString(t),
                   " has no opreg dtype (opreg tensors hold float32/64, float16, bfloat16, "
                   "int8/16/32/64, uint8/16/32/64, bool, float8_e4m3fn, float8_e5m2)");
  return *d;
}

size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::ComplexHalf:
    case ScalarType::UInt32:
      return 4;
    case ScalarType::ComplexFloat:
    case ScalarType::UInt64:
      return 8;
    case ScalarType::ComplexDouble:
      return 16;
    case ScalarType::UInt16:
      return 2;
    case ScalarType::QInt8:
    case ScalarType::QUInt8:
    case ScalarType::Float8_e5m2fnuz:
    case ScalarType::Float8_e4m3fnuz:
    case ScalarType::Float8_e8m0fnu:
    case ScalarType::Float4_e2m1fn_x2:
      return 1;
    case ScalarType::QInt32:
      return 4;
    default:
      return ::opreg::ItemSize(ToDType(t));
  }
}

bool isFloatingType(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
    case ScalarType::Float:
    case ScalarType::Double:
    case ScalarType::BFloat16:
      return true;
    default:
      return isFloat8Type(t);
  }
}

bool isIntegralType(ScalarType t, bool include_bool) {
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64:
      return true;
    case ScalarType::Bool:
      return include_bool;
    default:
      return false;
  }
}

bool isReducedFloatingType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 || isFloat8Type(t);
}

bool isFloat8Type(ScalarType t) {
  return t == ScalarType::Float8_e5m2 || t == ScalarType::Float8_e4m3fn ||
         t == ScalarType::Float8_e5m2fnuz || t == ScalarType::Float8_e4m3fnuz ||
         t == ScalarType::Float8_e8m0fnu;
}

namespace {

bool IsBarebonesUnsigned(ScalarType t) {
  return t == ScalarType::UInt16 || t == ScalarType::UInt32 || t == ScalarType::UInt64;
}

// Bits of a signed integer type (uint8 counts as 9: it needs int16 beside a signed type).
int SignedWidth(ScalarType t) {
  switch (t) {
    case ScalarType::Char:
      return 8;
    case ScalarType::Byte:
      return 9;
    case ScalarType::Short:
      return 16;
    case ScalarType::Int:
      return 32;
    default:
      return 64;
  }
}

}  // namespace

ScalarType promoteTypes(ScalarType a, ScalarType b) {
  if (a == b) return a;
  OPREG_CHECK_TYPE(!isComplexType(a) && !isComplexType(b),
                   "promoteTypes: complex types are outside opreg's torch_compat subset (",
                   toString(a), " and ", toString(b), ")");
  OPREG_CHECK_TYPE(!isFloat8Type(a) && !isFloat8Type(b),
                   "Promotion for Float8 Types is not supported, attempted to promote ",
                   toString(a), " and ", toString(b));
  if (IsBarebonesUnsigned(a) || IsBarebonesUnsigned(b)) {
    if (isFloatingType(a)) return a;
    if (isFloatingType(b)) return b;
    OPREG_THROW(kType,
                "Promotion for uint16, uint32, uint64 types is not supported, attempted "
                "to promote ",
                toString(a), " and ", toString(b));
  }
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  const bool fa = isFloatingType(a), fb = isFloatingType(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa) {  // two different floating types
    if (a == ScalarType::Double || b == ScalarType::Double) return ScalarType::Double;
    return ScalarType::Float;  // half with bfloat16, or either with float
  }
  // Two different integer types: the wider, uint8 with a signed type at least int16.
  const int w = std::max(SignedWidth(a), SignedWidth(b));
  if (w <= 16) return ScalarType::Short;
  return w <= 32 ? ScalarType::Int : ScalarType::Long;
}

bool isComplexType(ScalarType t) {
  return t == ScalarType::ComplexHalf || t == ScalarType::ComplexFloat ||
         t == ScalarType::ComplexDouble;
}

}  // namespace c10
