// c10::DeviceType and c10::Device with libtorch's codes and constants (torch::kCPU, kCUDA,
// kMeta), mapped onto opreg::Device.
//
// Errors: ToOpregDevice throws opreg::Error (kValue) for device types opreg has no tensors on
// (HIP, XPU, MPS, ...), naming the type.
//
// Thread safety: value types; all functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "opreg/core/device.h"

namespace c10 {

// PyTorch's codes (c10/core/DeviceType.h).
enum class DeviceType : int8_t {
  CPU = 0,
  CUDA = 1,
  HIP = 6,
  XPU = 12,
  MPS = 13,
  Meta = 14,
  PrivateUse1 = 20,
};
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kHIP = DeviceType::HIP;
constexpr DeviceType kXPU = DeviceType::XPU;
constexpr DeviceType kMPS = DeviceType::MPS;
constexpr DeviceType kMeta = DeviceType::Meta;
constexpr DeviceType kPrivateUse1 = DeviceType::PrivateUse1;

using DeviceIndex = int8_t;

// "cpu", "cuda", "meta", ... (lower case, as torch prints devices).
std::string DeviceTypeName(DeviceType type, bool lower_case = true);
std::ostream& operator<<(std::ostream& os, DeviceType type);

class Device {
 public:
  Device(DeviceType type, DeviceIndex index = -1)  // NOLINT: implicit, as in c10.
      : type_(type), index_(index) {}
  // "cpu", "cuda", "cuda:1", "meta"; kValue error otherwise.
  Device(const std::string& text);                         // NOLINT
  Device(const char* text) : Device(std::string(text)) {}  // NOLINT
  explicit Device(const ::opreg::Device& d);

  DeviceType type() const { return type_; }
  DeviceIndex index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  void set_index(DeviceIndex index) { index_ = index; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_meta() const { return type_ == DeviceType::Meta; }
  bool is_hip() const { return type_ == DeviceType::HIP; }
  bool is_xpu() const { return type_ == DeviceType::XPU; }
  bool is_mps() const { return type_ == DeviceType::MPS; }
  std::string str() const;

  friend bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }

 private:
  DeviceType type_;
  DeviceIndex index_;
};
std::ostream& operator<<(std::ostream& os, const Device& device);

// The opreg device; kValue error for device types opreg does not have.
::opreg::Device ToOpregDevice(const Device& device);

}  // namespace c10
