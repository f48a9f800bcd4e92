// Shared declarations of the opreg._C extension: the Python tensor object, value conversion
// between Python and IValue (by schema type), and the entry points of each source file.
//
// Threading: everything here runs with the GIL held unless stated otherwise; Python kernels
// re-acquire it when the dispatcher calls them.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "opreg/core/ivalue.h"
#include "opreg/core/tensor.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg::python {

namespace py = pybind11;

// The C++ object behind `opreg.Tensor`. A proxy tensor of a graph capture is a meta tensor
// with the id of its graph value and the capture that made it.
struct PyTensor {
  Tensor tensor;
  int32_t value = -1;  // graph value id (proxies only)
  uint64_t graph = 0;  // capture token (proxies only); 0 for ordinary tensors
};

// ---- tensor.cc ----
void InitTensor(py::module_& m);
// A new `opreg.Tensor` (None for an undefined tensor).
py::object WrapTensor(Tensor t);
py::object WrapProxy(Tensor t, int32_t value, uint64_t graph);
// The PyTensor inside `obj` when it is an opreg.Tensor, else nullptr (no exception).
PyTensor* AsPyTensor(py::handle obj);
// True for objects with `__dlpack__` (NumPy arrays, torch tensors, ...) or DLPack capsules.
bool IsDLPackProducer(py::handle obj);
// Factory arguments as opreg.empty takes them: a dtype name or object (None: float32), a
// device string (None: cpu), a shape (an int or a sequence of ints).
DType ParseDTypeArg(py::handle obj);
Device ParseDeviceArg(py::handle obj);
std::vector<int64_t> ShapeArg(py::handle obj);
// Imports a DLPack producer (or a "dltensor" capsule) without copying.
Tensor TensorFromDLPack(py::handle obj);

// ---- convert.cc ----
// How one schema type converts from Python (precomputed per argument).
enum class Conv : uint8_t {
  kTensor,
  kInt,
  kFloat,
  kBool,
  kStr,
  kScalar,
  kScalarType,
  kDevice,
  kIntList,
  kFloatList,
  kBoolList,
  kStrList,
  kTensorList,
  kOptionalTensorList,
  kGeneric,
};
struct ArgConv {
  Conv conv = Conv::kGeneric;
  bool optional = false;
};
ArgConv ArgConvFor(const Type& type);
// Converts a Python value for an argument; `where` names it in errors ("[ns::op] argument 'x'
// (#0)"), built lazily. Tensors are opreg.Tensor or DLPack producers; during a graph capture
// they become the capture's meta tensors.
IValue ToIValue(py::handle obj, ArgConv conv, const OperatorHandle* op, size_t index);
// Converts by the Python value's own type (no schema).
IValue ToIValueGeneric(py::handle obj);
// A Python value for a boxed value: opreg.Tensor, int, float, bool, str, None, lists, tuples.
py::object FromIValue(const IValue& v);
// The Python value of an op's returns: None for none, the value for one, a tuple otherwise.
py::object ReturnsToPython(Stack& stack);
// Converts a Python kernel's result to the op's returns and pushes them.
void PushReturns(const OperatorHandle& op, py::handle result, Stack* stack);
// The Tensor of an argument that must be one (opreg.Tensor or DLPack producer).
Tensor ToTensor(py::handle obj);

// ---- ops.cc ----
void InitOps(py::module_& m);
// An `_C.OpOverload` object for a handle.
py::object MakeOverload(const OperatorHandle& op);

// ---- library.cc ----
void InitLibrary(py::module_& m);

// ---- graph.cc ----
void InitGraph(py::module_& m);
class GraphCapture;
// This thread's capture while it records (not while a kernel it runs executes), or nullptr.
GraphCapture* ActiveCapture();
// During a capture: the tensor to pass for `obj` (a proxy's meta tensor, or the outside tensor,
// the same one for the same object).
Tensor CaptureTensor(GraphCapture* capture, py::handle obj);
// During a capture: the Python results (proxies) of a captured call's returns.
py::object CaptureResults(GraphCapture* capture, const OperatorHandle& op, const Stack& stack);

// ---- symm_mem.cc (the `_symm_mem` submodule; present when opreg::symm_mem is built) ----
void InitSymmMem(py::module_& m);

// ---- introspection.cc / errors.cc ----
void InitIntrospection(py::module_& m);
void InitErrors(py::module_& m);

// ---- cuda.cc: device count and the current-stream setting (_cuda_*) ----
void InitCuda(py::module_& m);

// Throws opreg::Error for a non-OK status (translated like every opreg::Error).
void CheckStatus(const absl::Status& status);

}  // namespace opreg::python
