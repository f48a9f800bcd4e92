#include "opreg/dispatch/dispatch_key.h"

#include <array>

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

}  // namespace

std::string_view DispatchKeyName(DispatchKey key) { return kKeyNames[static_cast<int>(key)].name; }

std::optional<DispatchKey> ParseDispatchKey(std::string_view name) {
  for (const KeyName& k : kKeyNames) {
    if (k.name == name) return k.key;
  }
  return std::nullopt;
}

}  // namespace opreg
