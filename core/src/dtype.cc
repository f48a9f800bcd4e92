#include "opreg/core/dtype.h"

#include <array>
#include <string>

#include "opreg/core/string_util.h"

namespace opreg {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view torch_name;
  std::string_view torch_alias;  // Unambiguous legacy torch alias, or "".
  int torch_code;
  bool floating;
};

// Indexed by the DType enumerator value.
constexpr std::array<DTypeInfo, kNumDTypes> kDTypes = {{
    {DType::kFloat32, "f32", "float32", "float", 6, true},
    {DType::kFloat64, "f64", "float64", "double", 7, true},
    {DType::kFloat16, "f16", "float16", "half", 5, true},
    {DType::kBFloat16, "bf16", "bfloat16", "", 15, true},
    {DType::kInt8, "i8", "int8", "", 1, false},
    {DType::kUInt8, "u8", "uint8", "", 0, false},
    {DType::kInt16, "i16", "int16", "short", 2, false},
    {DType::kInt32, "i32", "int32", "int", 3, false},
    {DType::kInt64, "i64", "int64", "long", 4, false},
    {DType::kBool, "bool", "bool", "", 11, false},
    {DType::kFloat8E4M3FN, "f8e4m3fn", "float8_e4m3fn", "", 24, true},
    {DType::kFloat8E5M2, "f8e5m2", "float8_e5m2", "", 23, true},
    {DType::kUInt16, "u16", "uint16", "", 27, false},
    {DType::kUInt32, "u32", "uint32", "", 28, false},
    {DType::kUInt64, "u64", "uint64", "", 29, false},
}};

constexpr bool TableIsIndexedByEnum() {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (static_cast<int>(kDTypes[i].dtype) != i) return false;
  }
  return true;
}
static_assert(TableIsIndexedByEnum(), "kDTypes must be in DType enumerator order");

const DTypeInfo& Info(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }

}  // namespace

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }
std::string_view TorchDTypeName(DType dtype) { return Info(dtype).torch_name; }
bool IsFloatingPoint(DType dtype) { return Info(dtype).floating; }
int TorchScalarTypeCode(DType dtype) { return Info(dtype).torch_code; }

std::optional<DType> DTypeFromTorchScalarTypeCode(int64_t code) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.torch_code == code) return info.dtype;
  }
  return std::nullopt;
}

absl::StatusOr<DType> ParseDType(std::string_view name) {
  std::string_view bare = name;
  if (bare.substr(0, 6) == "torch.") bare.remove_prefix(6);
  for (const DTypeInfo& info : kDTypes) {
    if (bare == info.name || bare == info.torch_name ||
        (!info.torch_alias.empty() && bare == info.torch_alias)) {
      return info.dtype;
    }
  }
  std::string accepted;
  for (const DTypeInfo& info : kDTypes) {
    StrAppend(&accepted, accepted.empty() ? "" : ", ", info.name, "/", info.torch_name);
  }
  return absl::InvalidArgumentError(StrCat("unknown dtype '", name, "' (expected one of ", accepted,
                                           ", or half/float/double/short/int/long)"));
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << DTypeName(dtype); }

}  // namespace opreg
