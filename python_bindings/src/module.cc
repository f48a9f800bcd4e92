// PYBIND11_MODULE(opreg._C): each source file adds its part.
#include "module_internal.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  using namespace opreg::python;
  m.doc() = "opreg's C++ core: tensors, DLPack, ops, libraries, graph capture, symmetric memory";
  m.attr("__version__") = OPREG_PY_VERSION;
  InitErrors(m);
  InitTensor(m);
  InitFrameworkTensors(m);
  InitTorchBridge(m);
  InitTorchPythonKernel(m);
  InitDefineListener(m);
  InitOps(m);
  InitLibrary(m);
  InitGraph(m);
  InitIntrospection(m);
  InitSymmMem(m);
  InitCuda(m);
  // The metaclass of the classes above (named in _C.pyi, for type checkers).
  m.attr("_pybind11_type") = py::reinterpret_borrow<py::object>(
      reinterpret_cast<PyObject*>(Py_TYPE(m.attr("Tensor").ptr())));
}
