// The op definitions of the mykernels namespace: one OPREG_LIBRARY block per namespace.
#include "mykernels.h"
#include "opreg/dispatch/library.h"

namespace mykernels {

const char* LibraryName() { return "mykernels"; }

}  // namespace mykernels

OPREG_LIBRARY(mykernels, m) {
  m.def("scale(Tensor x, float alpha=2.) -> Tensor");
  // Linked to `scale` automatically: same name, overload `out`, same arguments, one
  // keyword-only written Tensor per return.
  m.def("scale.out(Tensor x, float alpha=2., *, Tensor(a!) out) -> Tensor(a!)");
  m.def("count_positive(Tensor x) -> int");
  m.def("minmax(Tensor x) -> (Tensor, Tensor)");
}
