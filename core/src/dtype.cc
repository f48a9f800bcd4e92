#include "opreg/core/dtype.h"

#include <array>
#include <string>

#include "opreg/core/string_util.h"
#include "opreg/core/torch_scalar_types.h"

namespace opreg {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view torch_name;
  std::string_view torch_alias;  // torch's legacy name ("float", "long"), or "".
  int torch_code;
  bool floating;
};

// torch's facts of each ScalarType enumerator, as kTorch<enumerator>.
struct TorchFacts {
  std::string_view name;
  std::string_view legacy_name;
  int code;
};
#define OPREG_TORCH_FACTS(e, code, name, legacy) constexpr TorchFacts kTorch##e{name, legacy, code};
OPREG_FORALL_TORCH_SCALAR_TYPES(OPREG_TORCH_FACTS)
#undef OPREG_TORCH_FACTS

// Indexed by the DType enumerator value; generated from dtype_table.h, torch's names and codes
// from torch_scalar_types.h.
constexpr std::array<DTypeInfo, kNumDTypes> kDTypes = {{
#define OPREG_DTYPE_INFO(_, e, short_name, torch, size, floating, ...) \
  {DType::k##e, short_name, kTorch##torch.name, kTorch##torch.legacy_name, kTorch##torch.code, \
   floating},
    OPREG_DTYPE_TABLE(OPREG_DTYPE_INFO, _)
#undef OPREG_DTYPE_INFO
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
