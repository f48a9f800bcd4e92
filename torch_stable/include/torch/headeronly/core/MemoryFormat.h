// opreg::torch_stable: <torch/headeronly/core/MemoryFormat.h>. c10::MemoryFormat with torch's
// values.
#pragma once

#include <cstdint>

namespace c10 {
enum class MemoryFormat : int8_t { Contiguous = 0, Preserve = 1, ChannelsLast = 2,
                                   ChannelsLast3d = 3, NumOptions };
}  // namespace c10

namespace torch::headeronly {
using c10::MemoryFormat;
}  // namespace torch::headeronly
