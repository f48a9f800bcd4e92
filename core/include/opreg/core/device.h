// Where a tensor's bytes live: the CPU, a CUDA device, or nowhere ("meta": shapes only).
//
// Thread safety: Device is a small value type; all functions are pure.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace opreg {

enum class DeviceType : int8_t { kCPU, kCUDA, kMeta };

// "cpu", "cuda", "meta".
std::string_view DeviceTypeName(DeviceType type);

// A device type plus an index. The index is -1 ("unspecified": the current CUDA device) or a
// CUDA ordinal; CPU and meta devices always have index -1.
struct Device {
  DeviceType type = DeviceType::kCPU;
  int16_t index = -1;

  constexpr Device() = default;
  // Throws opreg::Error (kValue) when `index` is not -1 for cpu/meta or out of range for cuda.
  Device(DeviceType type, int index);

  static constexpr Device cpu() { return Device(); }
  static constexpr Device meta() { return Device(DeviceType::kMeta); }
  // A CUDA device; index -1 means "the current device". Throws opreg::Error (kValue) for
  // indices < -1 or > 32767.
  static Device cuda(int index);

  constexpr bool is_cpu() const { return type == DeviceType::kCPU; }
  constexpr bool is_cuda() const { return type == DeviceType::kCUDA; }
  constexpr bool is_meta() const { return type == DeviceType::kMeta; }
  constexpr bool has_index() const { return index >= 0; }

  // "cpu", "cuda", "cuda:0", "meta".
  std::string str() const;

  // Parses "cpu", "meta", "cuda", "cuda:N" (and "cpu:0", PyTorch's spelling of the CPU).
  // Errors are InvalidArgument: "invalid device string 'cuda:x': <reason>".
  static absl::StatusOr<Device> Parse(std::string_view text);

 private:
  constexpr explicit Device(DeviceType t) : type(t) {}
};

constexpr bool operator==(const Device& a, const Device& b) {
  return a.type == b.type && a.index == b.index;
}
constexpr bool operator!=(const Device& a, const Device& b) { return !(a == b); }

std::ostream& operator<<(std::ostream& os, const Device& device);
std::ostream& operator<<(std::ostream& os, DeviceType type);

}  // namespace opreg
