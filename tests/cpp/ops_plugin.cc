// A kernel library loaded at run time by test_cli_ops (`opreg ops --load`).
#include "opreg/dispatch/library.h"

namespace {

opreg::Tensor Identity(const opreg::Tensor& x) { return x; }

}  // namespace

OPREG_LIBRARY(plugin, m) {
  m.def("identity(Tensor x) -> Tensor");
  m.def("identity.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
}
OPREG_LIBRARY_IMPL(plugin, CPU, m) { m.impl("identity", &Identity); }
