#include "opreg/core/scalar_type.h"

#include <iterator>

#include "opreg/core/torch_scalar_types.h"

namespace opreg {
namespace {

// Generated from the one table (torch_scalar_types.h); the code is the enumerator's position.
constexpr TorchScalarTypeEntry kTable[] = {
#define OPREG_TORCH_SCALAR_TYPE_ENTRY(e, code, name, legacy) {#e, code, name, legacy},
    OPREG_FORALL_TORCH_SCALAR_TYPES(OPREG_TORCH_SCALAR_TYPE_ENTRY)
#undef OPREG_TORCH_SCALAR_TYPE_ENTRY
};

constexpr bool CodesArePositions() {
  for (size_t i = 0; i < std::size(kTable); ++i) {
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
  if (code < 0 || code >= static_cast<int64_t>(std::size(kTable))) return nullptr;
  return &kTable[static_cast<size_t>(code)];
}

}  // namespace opreg
