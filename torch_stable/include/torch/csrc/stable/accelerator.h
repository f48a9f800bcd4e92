// opreg::torch_stable: <torch/csrc/stable/accelerator.h>. DeviceGuard (the CUDA device current
// for a scope), Stream (the current stream of a device) and the current device index, through
// the runtime. Header-only.
#pragma once

#include <cstdint>
#include <memory>

#include "c/shim.h"
#include "macros.h"

namespace torch::stable::accelerator {

using DeviceIndex = int32_t;
using StreamId = int64_t;

class DeviceGuard {
 public:
  explicit DeviceGuard() = delete;
  explicit DeviceGuard(DeviceIndex device_index) : guard_(nullptr, &Delete) {
    DeviceGuardHandle handle = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_create_device_guard(device_index, &handle));
    guard_.reset(handle);
  }
  void set_index(DeviceIndex device_index) {
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_device_guard_set_index(guard_.get(), device_index));
  }

 private:
  static void Delete(DeviceGuardOpaque* handle) { aoti_torch_delete_device_guard(handle); }
  std::unique_ptr<DeviceGuardOpaque, void (*)(DeviceGuardOpaque*)> guard_;
};

class Stream {
 public:
  explicit Stream() = delete;
  explicit Stream(StreamHandle stream)
      : stream_(stream, [](StreamHandle s) { aoti_torch_delete_stream(s); }) {}
  StreamId id() const {
    StreamId id = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_stream_id(stream_.get(), &id));
    return id;
  }

 private:
  std::shared_ptr<StreamOpaque> stream_;
};

inline Stream getCurrentStream(DeviceIndex device_index) {
  StreamHandle stream = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_stream(device_index, &stream));
  return Stream(stream);
}

inline DeviceIndex getCurrentDeviceIndex() {
  DeviceIndex index = -1;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_device_index(&index));
  return index;
}

}  // namespace torch::stable::accelerator
