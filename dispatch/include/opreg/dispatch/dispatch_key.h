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

enum class DispatchKey : uint8_t {
  kCPU = 0,
  kCUDA = 1,
  kMeta = 2,
  kCompositeExplicit = 3,
  kCompositeImplicit = 4,
};

// The number of runtime keys: the size of every op's kernel table.
inline constexpr int kNumRuntimeKeys = 3;
inline constexpr int kNumDispatchKeys = 5;

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
    case DeviceType::kCPU:
      return DispatchKey::kCPU;
    case DeviceType::kCUDA:
      return DispatchKey::kCUDA;
    case DeviceType::kMeta:
      return DispatchKey::kMeta;
  }
  detail::ThrowUnknownDeviceType(type);
}

}  // namespace opreg
