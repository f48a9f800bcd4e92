// Dispatch keys: which kernel of an op runs.
//
// Runtime keys (CPU, CUDA, Meta) index an op's kernel table and are computed from a call's
// tensor arguments. Registration-only keys: CompositeExplicit (one kernel for every backend)
// and CompositeImplicit (one kernel for every backend, written in terms of other ops).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "opreg/core/device.h"

namespace opreg {

// The one table of dispatch keys, in two parts; the enum (runtime keys first), the counts, the
// names of DispatchKeyName / ParseDispatchKey and DispatchKeyFor are generated from it.
// Runtime keys, X(enumerator, name, device_type, device_name): each serves the tensors of one
// device type (ParseDispatchKey accepts the device's name too).
#define OPREG_RUNTIME_DISPATCH_KEYS(X) \
  X(CPU, "CPU", kCPU, "cpu")           \
  X(CUDA, "CUDA", kCUDA, "cuda")       \
  X(Meta, "Meta", kMeta, "meta")
// Registration-only keys, X(enumerator, name, torch_name): `torch_name` is PyTorch's spelling,
// which ParseDispatchKey accepts too.
#define OPREG_REGISTRATION_DISPATCH_KEYS(X)                                \
  X(CompositeExplicit, "CompositeExplicit", "CompositeExplicitAutograd") \
  X(CompositeImplicit, "CompositeImplicit", "CompositeImplicitAutograd")

enum class DispatchKey : uint8_t {
#define OPREG_DISPATCH_KEY_ENUMERATOR(e, ...) k##e,
  OPREG_RUNTIME_DISPATCH_KEYS(OPREG_DISPATCH_KEY_ENUMERATOR)
  OPREG_REGISTRATION_DISPATCH_KEYS(OPREG_DISPATCH_KEY_ENUMERATOR)
#undef OPREG_DISPATCH_KEY_ENUMERATOR
};

#define OPREG_DISPATCH_KEY_COUNT(...) +1
// The number of runtime keys: the size of every op's kernel table.
inline constexpr int kNumRuntimeKeys = 0 OPREG_RUNTIME_DISPATCH_KEYS(OPREG_DISPATCH_KEY_COUNT);
inline constexpr int kNumDispatchKeys =
    kNumRuntimeKeys + 0 OPREG_REGISTRATION_DISPATCH_KEYS(OPREG_DISPATCH_KEY_COUNT);
#undef OPREG_DISPATCH_KEY_COUNT

inline constexpr bool IsRuntimeKey(DispatchKey k) { return static_cast<int>(k) < kNumRuntimeKeys; }

// "CPU", "CUDA", "Meta", "CompositeExplicit", "CompositeImplicit".
std::string_view DispatchKeyName(DispatchKey key);

// Parses a key name. Accepts the names above, PyTorch's spellings (`CompositeImplicitAutograd`,
// `CompositeExplicitAutograd`) and lowercase device names (`cpu`, `cuda`, `meta`).
std::optional<DispatchKey> ParseDispatchKey(std::string_view name);

namespace detail {
// Throws kValue naming the device type's number: a DeviceType outside the enum (a corrupted
// value, or a device type added without a dispatch key).
[[noreturn]] void ThrowUnknownDeviceType(DeviceType type);
}  // namespace detail

// The runtime key of tensors on a device; an unknown device type is an error, never the CPU
// kernels.
inline constexpr DispatchKey DispatchKeyFor(DeviceType type) {
  switch (type) {
#define OPREG_DISPATCH_KEY_FOR_DEVICE(e, name, device, device_name) \
  case DeviceType::device:                            \
    return DispatchKey::k##e;
    OPREG_RUNTIME_DISPATCH_KEYS(OPREG_DISPATCH_KEY_FOR_DEVICE)
#undef OPREG_DISPATCH_KEY_FOR_DEVICE
  }
  detail::ThrowUnknownDeviceType(type);
}
}  // namespace opreg
