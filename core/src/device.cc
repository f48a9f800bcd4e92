#include "opreg/core/device.h"

#include <limits>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "opreg/core/error.h"

namespace opreg {

std::string_view DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU:
      return "cpu";
    case DeviceType::kCUDA:
      return "cuda";
    case DeviceType::kMeta:
      return "meta";
  }
  return "unknown";
}

Device::Device(DeviceType t, int i) : type(t) {
  if (t == DeviceType::kCUDA) {
    OPREG_CHECK_VALUE(i >= -1 && i <= std::numeric_limits<int16_t>::max(),
                      "Device: CUDA device index must be -1 (current) or in [0, 32767], got ", i);
  } else {
    OPREG_CHECK_VALUE(i == -1, "Device: ", DeviceTypeName(t),
                      " devices take no index (expected -1), got ", i);
  }
  index = static_cast<int16_t>(i);
}

Device Device::cuda(int index) { return Device(DeviceType::kCUDA, index); }

std::string Device::str() const {
  if (index < 0) return std::string(DeviceTypeName(type));
  return StrCat(DeviceTypeName(type), ":", index);
}

absl::StatusOr<Device> Device::Parse(std::string_view text) {
  auto fail = [&](std::string_view reason) {
    return absl::InvalidArgumentError(StrCat("invalid device string '", text, "': ", reason));
  };
  std::string_view type_part = text;
  std::string_view index_part;
  bool has_colon = false;
  if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    type_part = text.substr(0, colon);
    index_part = text.substr(colon + 1);
    has_colon = true;
  }
  DeviceType type;
  if (type_part == "cpu") {
    type = DeviceType::kCPU;
  } else if (type_part == "cuda") {
    type = DeviceType::kCUDA;
  } else if (type_part == "meta") {
    type = DeviceType::kMeta;
  } else {
    return fail(StrCat("unknown device type '", type_part, "' (expected cpu, cuda or meta)"));
  }
  if (!has_colon) return Device(type, -1);
  // Digits only: SimpleAtoi alone would accept "+1" and surrounding whitespace.
  int index = -1;
  const bool digits = !index_part.empty() && index_part.size() <= 5 &&
                      index_part.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits || !absl::SimpleAtoi(ToAbsl(index_part), &index) ||
      index > std::numeric_limits<int16_t>::max()) {
    return fail("device index must be an integer in [0, 32767]");
  }
  if (type == DeviceType::kCUDA) return Device(type, index);
  // PyTorch spells the CPU "cpu:0"; opreg's CPU has no index, so only 0 is meaningful.
  if (index != 0) return fail(StrCat(type_part, " devices take no index other than 0"));
  return Device(type, -1);
}

std::ostream& operator<<(std::ostream& os, const Device& device) { return os << device.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType type) { return os << DeviceTypeName(type); }

}  // namespace opreg
