// opreg::torch_stable: <torch/csrc/stable/stableivalue_conversions.h>. detail::from(value) boxes
// a C++ value into one StableIValue and detail::to<T>(boxed) unboxes it, with torch's encoding
// (see torch_stable/src/stable_ivalue.h): the boxed stack of TORCH_BOX kernels and of
// torch_call_dispatcher. `from` makes new references (a Tensor gets a new handle, an optional a
// heap box, a vector a list handle, a string a string handle); `to` takes them over.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../../headeronly/core/DeviceType.h"
#include "../../headeronly/core/Layout.h"
#include "../../headeronly/core/MemoryFormat.h"
#include "../../headeronly/core/ScalarType.h"
#include "../../headeronly/util/Exception.h"
#include "../../headeronly/util/HeaderOnlyArrayRef.h"
#include "c/shim.h"
#include "device.h"
#include "macros.h"
#include "tensor.h"

namespace torch::stable::detail {

template <class T>
struct FromImpl;
template <class T>
struct ToImpl;

template <class T>
StableIValue from(T val) {
  return FromImpl<std::decay_t<T>>::call(val);
}
template <class T>
StableIValue from(const std::optional<T>& val) {
  return FromImpl<std::optional<T>>::call(val);
}
inline StableIValue from(std::nullopt_t) { return 0; }
template <class T>
T to(StableIValue val) {
  return ToImpl<T>::call(val);
}

// Trivially copyable values of at most 8 bytes: their bits (ints, doubles, bools, pointers).
template <class T>
struct FromImpl {
  static StableIValue call(T val) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(StableIValue),
                  "torch::stable: this type cannot be boxed into a StableIValue");
    StableIValue out = 0;
    std::memcpy(&out, &val, sizeof(val));
    return out;
  }
};
template <class T>
struct ToImpl {
  static T call(StableIValue val) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(StableIValue),
                  "torch::stable: this type cannot be unboxed from a StableIValue");
    T out;
    std::memcpy(&out, &val, sizeof(out));
    return out;
  }
};

// Enums travel as the runtime's int32 codes (torch's values).
#define OPREG_STABLE_ENUM_CODE(Enum)                                             \
  template <>                                                                    \
  struct FromImpl<Enum> {                                                        \
    static StableIValue call(Enum v) { return from(static_cast<int32_t>(v)); }   \
  };                                                                             \
  template <>                                                                    \
  struct ToImpl<Enum> {                                                          \
    static Enum call(StableIValue v) { return static_cast<Enum>(to<int32_t>(v)); } \
  }
OPREG_STABLE_ENUM_CODE(torch::headeronly::ScalarType);
OPREG_STABLE_ENUM_CODE(torch::headeronly::DeviceType);
OPREG_STABLE_ENUM_CODE(torch::headeronly::Layout);
OPREG_STABLE_ENUM_CODE(torch::headeronly::MemoryFormat);
#undef OPREG_STABLE_ENUM_CODE

template <>
struct FromImpl<std::nullopt_t> {
  static StableIValue call(std::nullopt_t) { return 0; }
};

template <class T>
struct FromImpl<std::optional<T>> {
  static StableIValue call(const std::optional<T>& val) {
    if (!val.has_value()) return 0;
    return from(new StableIValue(FromImpl<T>::call(*val)));
  }
};
template <class T>
struct ToImpl<std::optional<T>> {
  static std::optional<T> call(StableIValue val) {
    auto* box = to<StableIValue*>(val);
    if (box == nullptr) return std::nullopt;
    const StableIValue inner = *box;
    delete box;
    return ToImpl<T>::call(inner);
  }
};

template <>
struct FromImpl<torch::stable::Tensor> {
  static StableIValue call(const torch::stable::Tensor& val) {
    AtenTensorHandle handle = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_new_tensor_handle(val.get(), &handle));
    return from(handle);
  }
};
template <>
struct ToImpl<torch::stable::Tensor> {
  static torch::stable::Tensor call(StableIValue val) {
    return torch::stable::Tensor(to<AtenTensorHandle>(val));
  }
};

// A Device: (device type code << 32) | uint32(index).
template <>
struct FromImpl<torch::stable::Device> {
  static StableIValue call(const torch::stable::Device& val) {
    const auto type = static_cast<uint32_t>(static_cast<int32_t>(val.type()));
    const auto index = static_cast<uint32_t>(val.index());
    return (static_cast<uint64_t>(type) << 32) | index;
  }
};
template <>
struct ToImpl<torch::stable::Device> {
  static torch::stable::Device call(StableIValue val) {
    const auto type = static_cast<int32_t>(static_cast<uint32_t>(val >> 32));
    const auto index = static_cast<int32_t>(static_cast<uint32_t>(val & 0xffffffffu));
    return torch::stable::Device(static_cast<torch::headeronly::DeviceType>(type), index);
  }
};

template <class T>
struct FromImpl<torch::headeronly::HeaderOnlyArrayRef<T>> {
  static StableIValue call(const torch::headeronly::HeaderOnlyArrayRef<T>& val) {
    StableListHandle list = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(torch_new_list_reserve_size(val.size(), &list));
    try {
      for (const T& item : val) {
        STABLE_TORCH_ERROR_CODE_CHECK(torch_list_push_back(list, FromImpl<T>::call(item)));
      }
    } catch (...) {
      torch_delete_list(list);
      throw;
    }
    return from(list);
  }
};
template <class T>
struct FromImpl<std::vector<T>> {
  static StableIValue call(const std::vector<T>& val) {
    return FromImpl<torch::headeronly::HeaderOnlyArrayRef<T>>::call(val);
  }
};
template <class T>
struct ToImpl<std::vector<T>> {
  static std::vector<T> call(StableIValue val) {
    auto list = to<StableListHandle>(val);
    size_t n = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(torch_list_size(list, &n));
    std::vector<T> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      StableIValue item = 0;
      STABLE_TORCH_ERROR_CODE_CHECK(torch_list_get_item(list, i, &item));
      out.push_back(ToImpl<T>::call(item));
    }
    STABLE_TORCH_ERROR_CODE_CHECK(torch_delete_list(list));
    return out;
  }
};

template <>
struct FromImpl<std::string> {
  static StableIValue call(const std::string& val) {
    StringHandle handle = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(torch_new_string_handle(val.data(), val.size(), &handle));
    return from(handle);
  }
};
template <>
struct FromImpl<std::string_view> {
  static StableIValue call(std::string_view val) {
    StringHandle handle = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(torch_new_string_handle(val.data(), val.size(), &handle));
    return from(handle);
  }
};
template <>
struct ToImpl<std::string> {
  static std::string call(StableIValue val) {
    auto handle = to<StringHandle>(val);
    size_t length = 0;
    const char* data = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(torch_string_length(handle, &length));
    STABLE_TORCH_ERROR_CODE_CHECK(torch_string_c_str(handle, &data));
    std::string out(data, length);
    STABLE_TORCH_ERROR_CODE_CHECK(torch_delete_string(handle));
    return out;
  }
};

}  // namespace torch::stable::detail
