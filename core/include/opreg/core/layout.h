// Layout and MemoryFormat: the schema enums `Layout` and `MemoryFormat` as C++ types, with
// PyTorch's codes (what a boxed value of those schema types holds, and what schema defaults
// such as `MemoryFormat? memory_format=contiguous_format` store).
//
// opreg tensors are always strided; the other layouts exist so that kernels can take and
// check a `Layout` argument from schemas written for PyTorch. Values only: no thread-safety
// concerns.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace opreg {

enum class Layout : int8_t {
  kStrided = 0,
  kSparse = 1,
  kSparseCsr = 2,
  kMkldnn = 3,
  kSparseCsc = 4,
  kSparseBsr = 5,
  kSparseBsc = 6,
  kJagged = 7,
};

enum class MemoryFormat : int8_t {
  kContiguous = 0,
  kPreserve = 1,
  kChannelsLast = 2,
  kChannelsLast3d = 3,
};

// The enum of a PyTorch code; nullopt for codes PyTorch does not define.
inline std::optional<Layout> LayoutFromCode(int64_t code) {
  if (code < 0 || code > static_cast<int64_t>(Layout::kJagged)) return std::nullopt;
  return static_cast<Layout>(code);
}
inline std::optional<MemoryFormat> MemoryFormatFromCode(int64_t code) {
  if (code < 0 || code > static_cast<int64_t>(MemoryFormat::kChannelsLast3d)) return std::nullopt;
  return static_cast<MemoryFormat>(code);
}

// The enum of a PyTorch name, with or without "torch." ("strided", "torch.channels_last", as
// str(torch.strided) prints it); nullopt for other names.
inline std::optional<Layout> LayoutFromName(std::string_view name) {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  constexpr std::string_view kNames[] = {"strided",    "sparse_coo", "sparse_csr", "_mkldnn",
                                         "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged"};
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (name == kNames[i]) return static_cast<Layout>(i);
  }
  return std::nullopt;
}
inline std::optional<MemoryFormat> MemoryFormatFromName(std::string_view name) {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  constexpr std::string_view kNames[] = {"contiguous_format", "preserve_format", "channels_last",
                                         "channels_last_3d"};
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (name == kNames[i]) return static_cast<MemoryFormat>(i);
  }
  return std::nullopt;
}

}  // namespace opreg
