#include "opreg/core/scalar_type.h"

#include <array>

namespace opreg {
namespace {

// c10/core/ScalarType.h (AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS) with the names of
// c10::getDtypeNames(); the code is the enumerator's position.
constexpr std::array<TorchScalarTypeEntry, 46> kTable = {{
    {"Byte", 0, "uint8", ""},
    {"Char", 1, "int8", ""},
    {"Short", 2, "int16", "short"},
    {"Int", 3, "int32", "int"},
    {"Long", 4, "int64", "long"},
    {"Half", 5, "float16", "half"},
    {"Float", 6, "float32", "float"},
    {"Double", 7, "float64", "double"},
    {"ComplexHalf", 8, "complex32", "chalf"},
    {"ComplexFloat", 9, "complex64", "cfloat"},
    {"ComplexDouble", 10, "complex128", "cdouble"},
    {"Bool", 11, "bool", ""},
    {"QInt8", 12, "qint8", ""},
    {"QUInt8", 13, "quint8", ""},
    {"QInt32", 14, "qint32", ""},
    {"BFloat16", 15, "bfloat16", ""},
    {"QUInt4x2", 16, "quint4x2", ""},
    {"QUInt2x4", 17, "quint2x4", ""},
    {"Bits1x8", 18, "bits1x8", ""},
    {"Bits2x4", 19, "bits2x4", ""},
    {"Bits4x2", 20, "bits4x2", ""},
    {"Bits8", 21, "bits8", ""},
    {"Bits16", 22, "bits16", ""},
    {"Float8_e5m2", 23, "float8_e5m2", ""},
    {"Float8_e4m3fn", 24, "float8_e4m3fn", ""},
    {"Float8_e5m2fnuz", 25, "float8_e5m2fnuz", ""},
    {"Float8_e4m3fnuz", 26, "float8_e4m3fnuz", ""},
    {"UInt16", 27, "uint16", ""},
    {"UInt32", 28, "uint32", ""},
    {"UInt64", 29, "uint64", ""},
    {"UInt1", 30, "uint1", ""},
    {"UInt2", 31, "uint2", ""},
    {"UInt3", 32, "uint3", ""},
    {"UInt4", 33, "uint4", ""},
    {"UInt5", 34, "uint5", ""},
    {"UInt6", 35, "uint6", ""},
    {"UInt7", 36, "uint7", ""},
    {"Int1", 37, "int1", ""},
    {"Int2", 38, "int2", ""},
    {"Int3", 39, "int3", ""},
    {"Int4", 40, "int4", ""},
    {"Int5", 41, "int5", ""},
    {"Int6", 42, "int6", ""},
    {"Int7", 43, "int7", ""},
    {"Float8_e8m0fnu", 44, "float8_e8m0fnu", ""},
    {"Float4_e2m1fn_x2", 45, "float4_e2m1fn_x2", ""},
}};

constexpr bool CodesArePositions() {
  for (size_t i = 0; i < kTable.size(); ++i) {
    if (kTable[i].code != static_cast<int64_t>(i)) return false;
  }
  return true;
}
static_assert(CodesArePositions(), "kTable must be in ScalarType code order");

}  // namespace

absl::Span<const TorchScalarTypeEntry> TorchScalarTypeTable() { return kTable; }

std::optional<int64_t> TorchScalarTypeFromName(std::string_view name) {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  if (name.empty()) return std::nullopt;
  for (const TorchScalarTypeEntry& entry : kTable) {
    if (name == entry.name || name == entry.legacy_name) return entry.code;
  }
  return std::nullopt;
}

const TorchScalarTypeEntry* TorchScalarTypeFromCode(int64_t code) {
  if (code < 0 || code >= static_cast<int64_t>(kTable.size())) return nullptr;
  return &kTable[static_cast<size_t>(code)];
}

}  // namespace opreg
