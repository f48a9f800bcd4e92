// Element types of opreg tensors, their names (opreg's short names and PyTorch's), sizes and the
// mapping to PyTorch's c10::ScalarType integer codes.
//
// Thread safety: all functions are pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

#include "absl/status/statusor.h"
#include "opreg/core/dtype_table.h"
#include "opreg/core/torch_scalar_types.h"

namespace opreg {

// Generated from dtype_table.h, in its order.
enum class DType : uint8_t {
#define OPREG_DTYPE_ENUMERATOR(_, e, ...) k##e,
  OPREG_DTYPE_TABLE(OPREG_DTYPE_ENUMERATOR, _)
#undef OPREG_DTYPE_ENUMERATOR
};

// Number of DType enumerators (for tables and loops).
inline constexpr int kNumDTypes = 0
#define OPREG_DTYPE_COUNT(...) +1
    OPREG_DTYPE_TABLE(OPREG_DTYPE_COUNT, _)
#undef OPREG_DTYPE_COUNT
    ;

// Bytes per element.
constexpr size_t ItemSize(DType dtype) {
  switch (dtype) {
#define OPREG_DTYPE_ITEM_SIZE(_, e, short_name, torch, size, ...) \
  case DType::k##e:                                           \
    return size;
    OPREG_DTYPE_TABLE(OPREG_DTYPE_ITEM_SIZE, _)
#undef OPREG_DTYPE_ITEM_SIZE
  }
  return 0;
}

// opreg's short name: f32 f64 f16 bf16 i8 u8 i16 i32 i64 bool f8e4m3fn f8e5m2 u16 u32 u64.
std::string_view DTypeName(DType dtype);

// PyTorch's name (torch.<name>): float32 float64 float16 bfloat16 int8 uint8 int16 int32 int64
// bool float8_e4m3fn float8_e5m2 uint16 uint32 uint64.
std::string_view TorchDTypeName(DType dtype);

// Parses a short name, a PyTorch name (optionally prefixed "torch.") or an unambiguous PyTorch
// alias (half, float, double, long, int, short). InvalidArgument error otherwise, listing the
// accepted names.
absl::StatusOr<DType> ParseDType(std::string_view name);

// True for f32 f64 f16 bf16 f8e4m3fn f8e5m2.
bool IsFloatingPoint(DType dtype);

// PyTorch's c10::ScalarType code (Float=6, BFloat16=15, Float8_e4m3fn=24, ...).
int TorchScalarTypeCode(DType dtype);

namespace dtype_internal {

// c10::ScalarType's codes by enumerator.
enum class TorchCode : int {
#define OPREG_TORCH_CODE(e, code, ...) k##e = code,
  OPREG_FORALL_TORCH_SCALAR_TYPES(OPREG_TORCH_CODE)
#undef OPREG_TORCH_CODE
};

// The DType enumerator value of each torch code, -1 where opreg has none. Generated here, in the
// header, so that a bridge's per-tensor lookup is an index with no call into libopreg_core. It has
// a row for every value of c10::ScalarType's underlying int8_t, not only for the codes torch has
// named, so that the index needs no range check beyond the one torch makes of its own codes (a
// code past the rows would fail this constant evaluation).
inline constexpr int kTorchCodeRows = 256;
constexpr std::array<int8_t, kTorchCodeRows> MakeDTypeByTorchCode() {
  std::array<int8_t, kTorchCodeRows> table{};
  for (int8_t& d : table) d = -1;
#define OPREG_DTYPE_BY_TORCH_CODE(_, e, short_name, torch, ...) \
  table[static_cast<int>(TorchCode::k##torch)] = static_cast<int8_t>(DType::k##e);
  OPREG_DTYPE_TABLE(OPREG_DTYPE_BY_TORCH_CODE, _)
#undef OPREG_DTYPE_BY_TORCH_CODE
  return table;
}
inline constexpr std::array<int8_t, kTorchCodeRows> kDTypeByTorchCode = MakeDTypeByTorchCode();

}  // namespace dtype_internal

// The DType of a c10::ScalarType code, or nullopt for codes opreg has no dtype for (complex,
// quantized, ...).
inline std::optional<DType> DTypeFromTorchScalarTypeCode(int64_t code) {
  if (static_cast<uint64_t>(code) >= dtype_internal::kTorchCodeRows) return std::nullopt;
  const int8_t d = dtype_internal::kDTypeByTorchCode[static_cast<size_t>(code)];
  if (d < 0) return std::nullopt;
  return static_cast<DType>(d);
}

// Prints DTypeName(dtype).
std::ostream& operator<<(std::ostream& os, DType dtype);

}  // namespace opreg
