// torch's integer codes (c10::DeviceType, c10::ScalarType, c10::Layout, c10::MemoryFormat) as
// the stable ABI passes them, and their opreg counterparts.
#pragma once

#include <cstdint>

#include "opreg/core/device.h"
#include "opreg/core/dtype.h"

namespace opreg::torch_stable {

inline constexpr int32_t kTorchCPU = 0;
inline constexpr int32_t kTorchCUDA = 1;
inline constexpr int32_t kTorchXPU = 12;
inline constexpr int32_t kTorchMPS = 13;
inline constexpr int32_t kTorchMeta = 14;
inline constexpr int32_t kTorchPrivateUse1 = 20;
inline constexpr int32_t kTorchStrided = 0;

// kValue error naming `what` for a code opreg has no dtype or device for.
DType DTypeFromCode(int32_t code, const char* what);
Device DeviceFromCodes(int32_t device_type, int32_t device_index, const char* what);
int32_t DeviceTypeCode(const Device& device);
// The index torch reports: -1 for CPU and meta, the ordinal (current device when unset) for CUDA.
int32_t DeviceIndexOf(const Device& device);

}  // namespace opreg::torch_stable
