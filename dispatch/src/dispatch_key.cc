#include "opreg/dispatch/dispatch_key.h"

#include <array>

#include "opreg/core/error.h"

namespace opreg {
namespace {

struct KeyName {
  std::string_view name;
  DispatchKey key;
};

constexpr std::array<KeyName, 11> kKeyNames = {{
    {"CPU", DispatchKey::kCPU},
    {"CUDA", DispatchKey::kCUDA},
    {"Meta", DispatchKey::kMeta},
    {"CompositeExplicit", DispatchKey::kCompositeExplicit},
    {"CompositeImplicit", DispatchKey::kCompositeImplicit},
    {"CompositeExplicitAutograd", DispatchKey::kCompositeExplicit},
    {"CompositeImplicitAutograd", DispatchKey::kCompositeImplicit},
    {"cpu", DispatchKey::kCPU},
    {"cuda", DispatchKey::kCUDA},
    {"meta", DispatchKey::kMeta},
    {"default", DispatchKey::kCompositeExplicit},
}};

// DispatchKeyName indexes kKeyNames by the enum: its first entries must be the keys in order.
constexpr bool KeyNamesInEnumOrder() {
  for (int k = 0; k < kNumDispatchKeys; ++k) {
    if (static_cast<int>(kKeyNames[k].key) != k) return false;
  }
  return true;
}
static_assert(KeyNamesInEnumOrder(), "kKeyNames must start with every DispatchKey in order");
static_assert(kNumRuntimeKeys == 3 && static_cast<int>(DispatchKey::kMeta) == kNumRuntimeKeys - 1,
              "the runtime keys come first in DispatchKey");

}  // namespace

namespace detail {
void ThrowUnknownDeviceType(DeviceType type) {
  OPREG_THROW(kValue, "unknown device type ", static_cast<int>(type),
              ": no dispatch key serves it (known: cpu, cuda, meta)");
}
}  // namespace detail

std::string_view DispatchKeyName(DispatchKey key) { return kKeyNames[static_cast<int>(key)].name; }

std::optional<DispatchKey> ParseDispatchKey(std::string_view name) {
  for (const KeyName& k : kKeyNames) {
    if (k.name == name) return k.key;
  }
  return std::nullopt;
}

}  // namespace opreg
