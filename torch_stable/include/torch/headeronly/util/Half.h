// opreg::torch_stable: <torch/headeronly/util/Half.h>. c10::Half (also torch::headeronly::Half):
// IEEE binary16, converted from float with round-to-nearest-even, as torch's. Usable in host
// and device code.
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>

#include "../macros/Macros.h"

namespace c10 {

struct alignas(2) Half {
  uint16_t x;

  struct from_bits_t {};
  static constexpr C10_HOST_DEVICE from_bits_t from_bits() { return from_bits_t(); }

  Half() = default;
  constexpr C10_HOST_DEVICE Half(uint16_t bits, from_bits_t) : x(bits) {}
  inline C10_HOST_DEVICE Half(float value) : x(FromFloat(value)) {}  // NOLINT: implicit as c10
  inline C10_HOST_DEVICE operator float() const { return ToFloat(x); }  // NOLINT

 private:
  static inline C10_HOST_DEVICE float ToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
      bits = sign | 0x7f800000u | (man << 13);  // inf / NaN
    } else if (exp == 0) {
      if (man == 0) {
        bits = sign;
      } else {  // subnormal: normalise
        exp = 127 - 15 + 1;
        while ((man & 0x400u) == 0) {
          man <<= 1;
          --exp;
        }
        bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
      }
    } else {
      bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float out;
    __builtin_memcpy(&out, &bits, sizeof(out));
    return out;
  }

  static inline C10_HOST_DEVICE uint16_t FromFloat(float value) {
    uint32_t bits;
    __builtin_memcpy(&bits, &value, sizeof(bits));
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7fffffffu;
    if (abs > 0x7f800000u) return sign | 0x7e00u;        // NaN
    if (abs >= 0x477ff000u) return sign | 0x7c00u;       // overflow (and inf) -> inf
    if (abs < 0x38800000u) {                             // subnormal or zero in half
      if (abs < 0x33000000u) return sign;                // below half of the smallest subnormal
      const uint32_t exp = abs >> 23;
      const uint32_t man = (abs & 0x7fffffu) | 0x800000u;
      // value = man * 2^(exp - 150); half's subnormal unit is 2^-24.
      const uint32_t shift = 126 - exp;  // 14..24
      const uint32_t rem = man & ((1u << shift) - 1u);
      const uint32_t halfway = 1u << (shift - 1);
      uint32_t result = man >> shift;
      if (rem > halfway || (rem == halfway && (result & 1u))) ++result;  // nearest even
      return sign | static_cast<uint16_t>(result);
    }
    // normal: rebias the exponent and round the mantissa to 10 bits
    uint32_t result = ((abs >> 13) - ((127 - 15) << 10));
    const uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (result & 1u))) ++result;
    return sign | static_cast<uint16_t>(result);
  }
};

inline std::ostream& operator<<(std::ostream& out, const Half& value) {
  return out << static_cast<float>(value);
}

}  // namespace c10

namespace torch::headeronly {
using c10::Half;
}  // namespace torch::headeronly
