// Built instead of symm_mem.cc when opreg::symm_mem is not part of the build: no `_symm_mem`
// submodule (importing opreg.symm_mem then fails with an ImportError saying so).
#include "module_internal.h"

namespace opreg::python {

void InitSymmMem(py::module_&) {}

}  // namespace opreg::python
