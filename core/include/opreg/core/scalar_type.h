// PyTorch's full c10::ScalarType code table and the dtype names torch accepts
// (c10::getStringToDtypeMap: "float32", "float", "bfloat16", "quint4x2", ...).
//
// opreg tensors support only the dtypes in dtype.h; this table exists so that schemas can carry
// every ScalarType PyTorch can name (e.g. the default `ScalarType dtype=bfloat16` is stored as
// the int 15, exactly as PyTorch stores it).
//
// Thread safety: all functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/types/span.h"

namespace opreg {

// One c10::ScalarType enumerator: its C++ name, integer code, and the names
// torch.dtype / c10::getStringToDtypeMap know it by (`legacy_name` may be empty).
struct TorchScalarTypeEntry {
  std::string_view enum_name;    // "BFloat16"
  int64_t code;                  // 15
  std::string_view name;         // "bfloat16"
  std::string_view legacy_name;  // "" ("float" for Float, "half" for Half, ...)
};

// Every ScalarType of PyTorch 2.7 (codes 0..45), in code order (Undefined excluded).
absl::Span<const TorchScalarTypeEntry> TorchScalarTypeTable();

// The code for a dtype name ("bfloat16" -> 15, "long" -> 4, "quint4x2" -> 16); nullopt for
// unknown names. Names are case-sensitive, as in PyTorch; a "torch." prefix is accepted.
std::optional<int64_t> TorchScalarTypeFromName(std::string_view name);

// The entry for a code, or nullptr when the code is not a ScalarType.
const TorchScalarTypeEntry* TorchScalarTypeFromCode(int64_t code);

}  // namespace opreg
