#include "opreg/dispatch/kernel_traits.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "opreg/core/error.h"
#include "opreg/core/scalar_type.h"
#include "opreg/core/string_util.h"
#include "opreg/dispatch/dispatcher.h"
#include "opreg/dispatch/kernel_function.h"

namespace opreg {
namespace detail {

std::string Demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(mangled);
}

// The schema spelling of a boxed value's type, for "expected int, got Tensor".
std::string BoxedTypeName(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::kNone:
      return "None";
    case IValue::Tag::kTensor:
      return v.toTensor().defined() ? "Tensor" : "an undefined Tensor (default-constructed)";
    case IValue::Tag::kInt:
      return "int";
    case IValue::Tag::kDouble:
      return "float";
    case IValue::Tag::kComplex:
      return "complex";
    case IValue::Tag::kBool:
      return "bool";
    case IValue::Tag::kString:
      return "str";
    case IValue::Tag::kDevice:
      return "Device";
    case IValue::Tag::kIntList:
      return "int[]";
    case IValue::Tag::kDoubleList:
      return "float[]";
    case IValue::Tag::kBoolList:
      return "bool[]";
    case IValue::Tag::kComplexList:
      return "complex[]";
    case IValue::Tag::kStringList:
      return "str[]";
    case IValue::Tag::kTensorList:
      return "Tensor[]";
    case IValue::Tag::kOptionalTensorList:
      return "Tensor?[]";
    case IValue::Tag::kGenericList:
      return "list";
    case IValue::Tag::kTuple: {
      // With its elements' types: "(float, int)" says why it does not fit "(int, int)?".
      std::string out = "(";
      const std::vector<IValue>& elements = v.toTuple();
      for (size_t i = 0; i < elements.size(); ++i) {
        StrAppend(&out, i == 0 ? "" : ", ", BoxedTypeName(elements[i]));
      }
      return out + (elements.size() == 1 ? ",)" : ")");
    }
    case IValue::Tag::kObject:
      return std::string(v.toObject()->class_name());
  }
  return "unknown";
}

namespace {

std::string ArgumentName(const OperatorHandle* op, size_t index) {
  if (op == nullptr) return StrCat("#", index);
  const OpDefinition* def = op->entry().definition();
  if (def != nullptr && index < def->schema.arguments().size()) {
    return def->schema.arguments()[index].name();
  }
  return StrCat("_", index);
}

}  // namespace

void ThrowArgError(const ArgSite& at, std::string_view expected, std::string_view got) {
  const std::string op = at.op != nullptr ? at.op->operator_name().str() : "<kernel>";
  OPREG_THROW(kType, ArgErrorMessage(op, ArgumentName(at.op, at.index), static_cast<int>(at.index),
                                     expected, got));
}

void ThrowArgTypeError(const ArgSite& at, std::string_view expected, const IValue& v) {
  ThrowArgError(at, expected, BoxedTypeName(v));
}

void ThrowReturnTypeError(const OperatorHandle* op, size_t index, std::string_view expected,
                          const IValue& v) {
  OPREG_THROW(kType, "[", op != nullptr ? op->operator_name().str() : "<kernel>", "] return #",
              index, ": expected ", ToAbsl(expected), ", got ", BoxedTypeName(v));
}

void CheckBoxedArgumentCount(const OperatorHandle& op, const Stack& stack, size_t expected) {
  OPREG_CHECK(stack.size() >= expected, "[", op.operator_name().str(), "] the kernel takes ",
              expected, " arguments but the stack holds ", stack.size());
}

}  // namespace detail

Device ArgTraits<Device>::FromIValue(const IValue& v, const detail::ArgSite& at) {
  if (v.isDevice()) return v.toDevice();
  if (v.isString()) {
    absl::StatusOr<Device> d = Device::Parse(v.toStringRef());
    if (d.ok()) return *d;
  }
  detail::ThrowArgTypeError(at, "Device", v);
}

DType ArgTraits<DType>::FromIValue(const IValue& v, const detail::ArgSite& at) {
  if (v.isInt()) {
    const int64_t code = v.toInt();
    if (std::optional<DType> d = DTypeFromTorchScalarTypeCode(code)) return *d;
    // A ScalarType opreg has no dtype for (complex, quantized, ...): named, as torch would.
    const TorchScalarTypeEntry* entry = TorchScalarTypeFromCode(code);
    detail::ThrowArgError(at, "a ScalarType that opreg supports",
                          entry != nullptr
                              ? StrCat("torch.", entry->name, " (ScalarType ", code, ")")
                              : StrCat("ScalarType code ", code));
  }
  detail::ThrowArgTypeError(at, "ScalarType", v);
}

Layout ArgTraits<Layout>::FromIValue(const IValue& v, const detail::ArgSite& at) {
  if (!v.isInt()) detail::ThrowArgTypeError(at, "Layout", v);
  if (std::optional<Layout> l = LayoutFromCode(v.toInt())) return *l;
  detail::ThrowArgTypeError(at, "a Layout code (0 to 7)", v);
}

MemoryFormat ArgTraits<MemoryFormat>::FromIValue(const IValue& v, const detail::ArgSite& at) {
  if (!v.isInt()) detail::ThrowArgTypeError(at, "MemoryFormat", v);
  if (std::optional<MemoryFormat> f = MemoryFormatFromCode(v.toInt())) return *f;
  detail::ThrowArgTypeError(at, "a MemoryFormat code (0 to 3)", v);
}

std::string InferredSignature::str() const {
  std::string out = "(";
  for (size_t i = 0; i < arguments.size(); ++i) {
    StrAppend(&out, i > 0 ? ", " : "", arguments[i]->str(), " _", i);
  }
  out += ") -> ";
  if (returns.size() == 1) {
    StrAppend(&out, returns[0]->str(), " _0");
  } else {
    out += "(";
    for (size_t i = 0; i < returns.size(); ++i) {
      StrAppend(&out, i > 0 ? ", " : "", returns[i]->str(), " _", i);
    }
    out += ")";
  }
  return out;
}

bool InferredTypeMatches(const Type& inferred, const Type& schema_type) {
  switch (inferred.kind()) {
    case TypeKind::kAny:
      return true;
    case TypeKind::kInt:
      // int64_t is the kernel-facing type of int, SymInt, ScalarType, Layout, MemoryFormat.
      switch (schema_type.kind()) {
        case TypeKind::kInt:
        case TypeKind::kSymInt:
        case TypeKind::kScalarType:
        case TypeKind::kLayout:
        case TypeKind::kMemoryFormat:
          return true;
        default:
          return false;
      }
    case TypeKind::kScalarType:
    case TypeKind::kLayout:
    case TypeKind::kMemoryFormat:
      return schema_type.kind() == inferred.kind();
    case TypeKind::kFloat:
      return schema_type.kind() == TypeKind::kFloat || schema_type.kind() == TypeKind::kSymFloat;
    case TypeKind::kBool:
      return schema_type.kind() == TypeKind::kBool || schema_type.kind() == TypeKind::kSymBool;
    case TypeKind::kClass:
      return schema_type.kind() == TypeKind::kClass;
    case TypeKind::kList:
    case TypeKind::kOptional:
      return schema_type.kind() == inferred.kind() &&
             InferredTypeMatches(*inferred.element(), *schema_type.element());
    case TypeKind::kTuple: {
      if (schema_type.kind() != TypeKind::kTuple ||
          schema_type.contained().size() != inferred.contained().size()) {
        return false;
      }
      for (size_t i = 0; i < inferred.contained().size(); ++i) {
        if (!InferredTypeMatches(*inferred.contained()[i], *schema_type.contained()[i])) {
          return false;
        }
      }
      return true;
    }
    default:
      return inferred.Equals(schema_type);
  }
}

}  // namespace opreg
