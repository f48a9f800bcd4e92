#include "opreg/kernels/cpu/mul.h"

#include "binary.h"

namespace opreg::kernels::cpu {

void MulOut(const Tensor& self, const Tensor& other, Tensor& out) {
  detail::RequireCpuContiguous("MulOut", out, "out");
  detail::DispatchFloating(out.dtype(), "MulOut", [&](auto tag) {
    using T = decltype(tag);
    detail::BinaryBroadcast<T>(self, other, out, detail::BinaryKind{true, 1.0f});
  });
}

}  // namespace opreg::kernels::cpu
