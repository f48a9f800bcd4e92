// c10::Float8_e4m3fnuz and c10::Float8_e5m2fnuz: opreg's fnuz FP8 types
// (opreg/core/float8_fnuz.h), by libtorch's names.
#pragma once

#include "opreg/core/float8_fnuz.h"

namespace c10 {
using Float8_e4m3fnuz = ::opreg::Float8E4M3FNUZ;
using Float8_e5m2fnuz = ::opreg::Float8E5M2FNUZ;
}  // namespace c10
