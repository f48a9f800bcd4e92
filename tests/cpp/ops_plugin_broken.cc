// A kernel library with a mistake in the middle of its block, loaded at run time by
// test_cli_ops: the mistake is reported and costs only itself.
#include "opreg/dispatch/library.h"

namespace {

opreg::Tensor Identity(const opreg::Tensor& x) { return x; }

}  // namespace

OPREG_LIBRARY(broken_plugin, m) {
  m.def("before(Tensor x) -> Tensor");
  m.def("typo(Tensor x) -> Tensr");
  m.def("after(Tensor x) -> Tensor");
}
OPREG_LIBRARY_IMPL(broken_plugin, CPU, m) {
  m.impl("typo", &Identity);
  m.impl("after", &Identity);
}
