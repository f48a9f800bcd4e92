// opreg::torch_stable: <torch/csrc/stable/device.h>. torch::stable::Device: a device type and
// index (-1: unspecified), parsed from "cpu" / "cuda:1" through the runtime. Header-only.
#pragma once

#include <cstdint>
#include <string>

#include "../../headeronly/core/DeviceType.h"
#include "../../headeronly/util/Exception.h"
#include "macros.h"

namespace torch::stable {

using DeviceType = torch::headeronly::DeviceType;
using DeviceIndex = int32_t;

class Device {
 public:
  Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {  // NOLINT
    STD_TORCH_CHECK(index >= -1, "Device index must be -1 or non-negative, got ", index);
    STD_TORCH_CHECK(index == -1 || type != DeviceType::CPU,
                    "CPU device index must be -1 or zero, got ", index);
    if (type == DeviceType::CPU && index == 0) index_ = -1;
  }
  Device(const std::string& text) {  // NOLINT
    uint32_t type = 0;
    int32_t index = -1;
    STABLE_TORCH_ERROR_CODE_CHECK(torch_parse_device_string(text.c_str(), &type, &index));
    type_ = static_cast<DeviceType>(type);
    index_ = index;
  }

  bool operator==(const Device& other) const {
    return type_ == other.type_ && index_ == other.index_;
  }
  bool operator!=(const Device& other) const { return !(*this == other); }
  void set_index(DeviceIndex index) { index_ = index; }
  DeviceType type() const { return type_; }
  DeviceIndex index() const { return index_; }
  bool has_index() const { return index_ != -1; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_meta() const { return type_ == DeviceType::Meta; }

 private:
  DeviceType type_ = DeviceType::CPU;
  DeviceIndex index_ = -1;
};

}  // namespace torch::stable
