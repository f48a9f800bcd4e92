#include "opreg/kernels/cpu/add.h"

#include "binary.h"

namespace opreg::kernels::cpu {

void AddOut(const Tensor& self, const Tensor& other, double alpha, Tensor& out) {
  detail::RequireCpuContiguous("AddOut", out, "out");
  detail::DispatchFloating(out.dtype(), "AddOut", [&](auto tag) {
    using T = decltype(tag);
    detail::BinaryBroadcast<T>(self, other, out,
                               detail::BinaryKind{false, static_cast<float>(alpha)});
  });
}

}  // namespace opreg::kernels::cpu
