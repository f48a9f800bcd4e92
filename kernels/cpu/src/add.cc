#include "opreg/kernels/cpu/add.h"

#include "binary.h"

namespace opreg::kernels::cpu {

void AddCpu(const Tensor& self, const Tensor& other, double alpha, Tensor& out) {
  detail::RequireCpuContiguous("AddCpu", out, "out");
  const float a = static_cast<float>(alpha);
  detail::DispatchFloating(out.dtype(), "AddCpu", [&](auto tag) {
    using T = decltype(tag);
    if (a == 1.0f) {
      detail::BinaryBroadcast<T>(
          self, other, out, [](float x, float y) { return x + y; }, detail::BinaryKind{});
    } else {
      detail::BinaryBroadcast<T>(
          self, other, out, [a](float x, float y) { return x + a * y; },
          detail::BinaryKind{false, a});
    }
  });
}

}  // namespace opreg::kernels::cpu
