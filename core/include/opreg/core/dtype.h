// Element types of opreg tensors, their names (opreg's short names and PyTorch's), sizes and the
// mapping to PyTorch's c10::ScalarType integer codes.
//
// Thread safety: all functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

#include "absl/status/statusor.h"
#include "opreg/core/dtype_table.h"

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

// The DType of a c10::ScalarType code, or nullopt for codes opreg has no dtype for (complex,
// quantized, ...).
std::optional<DType> DTypeFromTorchScalarTypeCode(int64_t code);

// Prints DTypeName(dtype).
std::ostream& operator<<(std::ostream& os, DType dtype);

}  // namespace opreg
