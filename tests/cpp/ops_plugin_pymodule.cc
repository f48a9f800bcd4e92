// A kernel library that is also a Python extension module, as vLLM's _C is: its module init
// refers to libpython's functions and data (declared here by hand, so the test needs no Python
// headers). `opreg ops --load` must load it without running the init.
#include "opreg/dispatch/library.h"

extern "C" {
struct PyObjectStub;
PyObjectStub* PyModule_Create2(void* definition, int api_version);
extern char _Py_NoneStruct;  // data: resolved when the library loads, not on first call

__attribute__((visibility("default"))) PyObjectStub* PyInit_pymodule_plugin() {
  return _Py_NoneStruct == 0 ? PyModule_Create2(nullptr, 1013) : nullptr;
}
}

namespace {
opreg::Tensor Same(const opreg::Tensor& x) { return x; }
}  // namespace

OPREG_LIBRARY(pymodule_plugin, m) { m.def("same(Tensor x) -> Tensor", &Same); }
