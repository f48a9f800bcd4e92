// c10::Device parsing, printing and the mapping to opreg::Device.
#include "opreg/torch_compat/device.h"

#include "opreg/torch_compat/macros.h"

namespace c10 {

std::string DeviceTypeName(DeviceType type, bool lower_case) {
  switch (type) {
    case DeviceType::CPU:
      return lower_case ? "cpu" : "CPU";
    case DeviceType::CUDA:
      return lower_case ? "cuda" : "CUDA";
    case DeviceType::HIP:
      return lower_case ? "hip" : "HIP";
    case DeviceType::XPU:
      return lower_case ? "xpu" : "XPU";
    case DeviceType::MPS:
      return lower_case ? "mps" : "MPS";
    case DeviceType::Meta:
      return lower_case ? "meta" : "META";
    case DeviceType::PrivateUse1:
      return lower_case ? "privateuseone" : "PRIVATEUSEONE";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, DeviceType type) { return os << DeviceTypeName(type); }

Device::Device(const std::string& text) {
  absl::StatusOr<::opreg::Device> parsed = ::opreg::Device::Parse(text);
  ::opreg::ThrowIfError(parsed.status());
  *this = Device(*parsed);
}

Device::Device(const ::opreg::Device& d)
    : type_(d.is_cuda()   ? DeviceType::CUDA
            : d.is_meta() ? DeviceType::Meta
                          : DeviceType::CPU),
      index_(static_cast<DeviceIndex>(d.index)) {}

std::string Device::str() const {
  std::string s = DeviceTypeName(type_);
  if (has_index()) s += ":" + std::to_string(index_);
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& device) { return os << device.str(); }

::opreg::Device ToOpregDevice(const Device& device) {
  switch (device.type()) {
    case DeviceType::CPU:
      return ::opreg::Device::cpu();
    case DeviceType::CUDA:
      return ::opreg::Device::cuda(device.index());
    case DeviceType::Meta:
      return ::opreg::Device::meta();
    default:
      OPREG_THROW(kValue, "device '", device.str(),
                  "' has no opreg counterpart (opreg has cpu, cuda and meta)");
  }
}

}  // namespace c10
