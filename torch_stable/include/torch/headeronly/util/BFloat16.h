// opreg::torch_stable: <torch/headeronly/util/BFloat16.h>. c10::BFloat16 (also
// torch::headeronly::BFloat16): the top 16 bits of an IEEE float, converted from float with
// round-to-nearest-even (NaN stays NaN), as torch's. Usable in host and device code.
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>

#include "../macros/Macros.h"

namespace c10 {

struct alignas(2) BFloat16 {
  uint16_t x;

  struct from_bits_t {};
  static constexpr C10_HOST_DEVICE from_bits_t from_bits() { return from_bits_t(); }

  BFloat16() = default;
  constexpr C10_HOST_DEVICE BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  inline C10_HOST_DEVICE BFloat16(float value) : x(Round(value)) {}  // NOLINT: implicit as c10
  inline C10_HOST_DEVICE operator float() const {                   // NOLINT
    uint32_t bits = static_cast<uint32_t>(x) << 16;
    float out;
    __builtin_memcpy(&out, &bits, sizeof(out));
    return out;
  }

 private:
  static inline C10_HOST_DEVICE uint16_t Round(float value) {
    uint32_t bits;
    __builtin_memcpy(&bits, &value, sizeof(bits));
    if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
    const uint32_t rounding_bias = 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>((bits + rounding_bias) >> 16);
  }
};

inline std::ostream& operator<<(std::ostream& out, const BFloat16& value) {
  return out << static_cast<float>(value);
}

}  // namespace c10

namespace torch::headeronly {
using c10::BFloat16;
}  // namespace torch::headeronly
