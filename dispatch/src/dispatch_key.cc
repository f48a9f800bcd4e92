#include "opreg/dispatch/dispatch_key.h"

#include "opreg/core/error.h"

namespace opreg {
namespace {

struct KeyName {
  std::string_view name;
  DispatchKey key;
};

// Generated from dispatch_key.h's tables: every key by its name first, in enum order (for
// DispatchKeyName), then the other spellings ParseDispatchKey accepts: PyTorch's names of the
// registration-only keys, the device names of the runtime keys, and "default".
constexpr KeyName kKeyNames[] = {
#define OPREG_KEY_NAME(e, name, ...) {name, DispatchKey::k##e},
    OPREG_RUNTIME_DISPATCH_KEYS(OPREG_KEY_NAME) OPREG_REGISTRATION_DISPATCH_KEYS(OPREG_KEY_NAME)
#undef OPREG_KEY_NAME
#define OPREG_KEY_TORCH_NAME(e, name, torch_name) {torch_name, DispatchKey::k##e},
    OPREG_REGISTRATION_DISPATCH_KEYS(OPREG_KEY_TORCH_NAME)
#undef OPREG_KEY_TORCH_NAME
#define OPREG_KEY_DEVICE_NAME(e, name, device, device_name) {device_name, DispatchKey::k##e},
    OPREG_RUNTIME_DISPATCH_KEYS(OPREG_KEY_DEVICE_NAME)
#undef OPREG_KEY_DEVICE_NAME
    {"default", DispatchKey::kCompositeExplicit},
};

// DispatchKeyName indexes kKeyNames by the enum: its first entries must be the keys in order.
constexpr bool KeyNamesInEnumOrder() {
  for (int k = 0; k < kNumDispatchKeys; ++k) {
    if (static_cast<int>(kKeyNames[k].key) != k) return false;
  }
  return true;
}
static_assert(KeyNamesInEnumOrder(), "kKeyNames must start with every DispatchKey in order");

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
