// Shared declarations of the opreg._C extension: the Python tensor object, value conversion
// between Python and IValue (by schema type), and the entry points of each source file.
//
// Threading: everything here runs with the GIL held unless stated otherwise; Python kernels
// re-acquire it when the dispatcher calls them.
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/core/ivalue.h"
#include "opreg/core/recycled_tensors.h"
#include "opreg/core/tensor.h"
#include "opreg/dispatch/dispatcher.h"

// Versioned capsules and frameworks' C exchange API need DLPack >= 1.2 (python_bindings/
// CMakeLists.txt takes the header from the apache-tvm-ffi package, not Debian's 0.6).
static_assert(DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 2),
              "opreg._C needs the DLPack >= 1.2 header (DLPackExchangeAPI)");

namespace opreg::python {

namespace py = pybind11;

// True before the interpreter starts and once it shuts down: no Python C API call that needs a
// running interpreter may be made. Callable from any thread, with or without the GIL.
inline bool InterpreterGone() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing() != 0;
#else
  return !Py_IsInitialized() || _Py_IsFinalizing() != 0;
#endif
}

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
// AsPyTensor for exactly an opreg.Tensor (a subclass gives nullptr): one pointer comparison.
PyTensor* ExactPyTensor(py::handle obj);
// True for objects with `__dlpack__` (NumPy arrays, torch tensors, ...) or DLPack capsules.
bool IsDLPackProducer(py::handle obj);
// Factory arguments as opreg.empty takes them: a dtype name or object (None: float32), a
// device string (None: cpu), a shape (an int or a sequence of ints).
DType ParseDTypeArg(py::handle obj);
Device ParseDeviceArg(py::handle obj);
std::vector<int64_t> ShapeArg(py::handle obj);
// Imports a DLPack producer (or a "dltensor" / "dltensor_versioned" capsule) without copying.
// Producers are asked for a versioned capsule first (`__dlpack__(max_version=...)`).
Tensor TensorFromDLPack(py::handle obj);
// Imports a DLPack 1.x tensor without copying; a read-only one sets
// ThisCallOrigin().last_import_readonly. On success the tensor owns `m`; when this throws (another
// major version, a layout opreg cannot view) the caller still owns it.
Tensor ImportVersioned(DLManagedTensorVersioned* m);
// A DLPack 1.x export of `tensor` (not undefined, not meta) that keeps it alive until its
// deleter runs; `copied` sets DLPACK_FLAG_BITMASK_IS_COPIED. Counted by the export test hooks.
DLManagedTensorVersioned* ExportVersioned(const Tensor& tensor, bool copied);
// A writable NumPy array over an opreg.Tensor object's memory (CPU, NumPy dtypes), its base
// keeping the tensor alive. Throws opreg::Error otherwise.
py::object NumpyView(py::object opreg_tensor);

// ---- framework_tensors.cc ----
// Where the tensors of the running opreg.ops call came from, so that its results go back in
// the caller's framework (torch in: torch out; NumPy in: NumPy out). One per thread; an
// OpOverload call and a Python kernel's arguments each start a fresh one (CallOriginScope).
struct CallOrigin {
  bool op_call = false;                    // inside an opreg.ops call: results follow the origin
  const DLPackExchangeAPI* api = nullptr;  // exchange API of the first framework tensor (torch)
  PyTypeObject* dlpack_type = nullptr;     // else the type of the first __dlpack__ producer
  bool numpy = false;                      // some tensor came from a NumPy array
  int32_t cuda_device = -1;                // device of the first CUDA tensor from `api`
  bool last_import_readonly = false;       // an import since the last check was read-only
  // The call's RecycleScope: imported framework tensors reuse tensor objects and are given back
  // when the call ends. Null outside an opreg.ops call (imports that may live on).
  RecycleScope* recycle = nullptr;
};
CallOrigin& ThisCallOrigin();
// For the RecycleScope of a call that ends with the GIL held (an opreg.ops call): the Python
// objects and NumPy buffers its imported tensors own are released there without checking for
// the GIL (RecycleScope::ReleaseAtEndWith).
void ReleaseAtEndHoldingGil(RecycleScope* scope);
// This thread's call state: the boxed stack StackLease lends and the cache RecycleScope takes
// framework arguments' tensors from, both reached with one thread-local lookup (in a shared
// library each is a call). Plain thread-local data, made on the thread's first call
// (stack_lease.cc); only for the thread it belongs to.
struct ThreadCallState {
  alignas(Stack) unsigned char raw[sizeof(Stack)];
  internal::RecycledTensorCache* argument_cache;  // RecycledTensors::ThisThreadCache()
  bool made;
  bool busy;  // its stack is lent

  Stack* stack() { return std::launder(reinterpret_cast<Stack*>(raw)); }
};
// Constant-initialised (zeros) and defined here, so a use needs no initialisation check.
inline thread_local ThreadCallState t_call_state{};
ThreadCallState* MakeThreadCallState();  // the first call on a thread
inline ThreadCallState* ThisThreadCallState() {
  ThreadCallState* state = &t_call_state;
  // An opaque copy: the compiler would otherwise look the address up again (a call in a shared
  // library) wherever that is cheaper than keeping it in a register.
  asm("" : "+r"(state));
  return OPREG_LIKELY(state->made) ? state : MakeThreadCallState();
}

// The boxed stack of one call: this thread's stack, kept between calls so a call allocates
// none, or a fresh one while that is in use (a kernel that calls another op). Declare it after
// the call's RecycleScope: its values are cleared first. Not thread-safe: one per call, on the
// caller's thread.
class StackLease {
 public:
  StackLease() : StackLease(ThisThreadCallState()) {}
  // With the state of this thread, found earlier.
  explicit StackLease(ThreadCallState* state) {
    if (state->busy) {
      stack_ = &own_.emplace();
      busy_ = nullptr;
    } else {
      state->busy = true;
      stack_ = state->stack();
      busy_ = &state->busy;
    }
  }
  ~StackLease() {
    if (busy_ != nullptr) {
      stack_->clear();  // the values go now; the capacity stays for the next call
      *busy_ = false;
    } else {
      own_.reset();
    }
  }
  StackLease(const StackLease&) = delete;
  StackLease& operator=(const StackLease&) = delete;
  Stack& get() { return *stack_; }

 private:
  Stack* stack_;
  bool* busy_;  // the thread stack's in-use flag, null for an own stack
  std::optional<Stack> own_;  // only for a nested call (made then, so a call pays nothing)
};
class CallOriginScope {
 public:
  // `op_call`: an opreg.ops call, whose results follow its tensors' origin; false for scopes
  // that only isolate (Python kernels' arguments, conversions outside calls).
  explicit CallOriginScope(bool op_call) : current_(&ThisCallOrigin()), saved_(*current_) {
    *current_ = CallOrigin{};
    current_->op_call = op_call;
  }
  ~CallOriginScope() { *current_ = saved_; }
  CallOrigin& Get() { return *current_; }
  CallOriginScope(const CallOriginScope&) = delete;
  CallOriginScope& operator=(const CallOriginScope&) = delete;

 private:
  CallOrigin* current_;  // this thread's (the scope never leaves its thread)
  CallOrigin saved_;
};
// Imports a tensor of another framework without copying and without a Python-level call where
// the framework allows: torch (any type with __dlpack_c_exchange_api__) through its C exchange
// API, NumPy arrays through the buffer protocol, other producers and capsules through
// __dlpack__. Records the origin in ThisCallOrigin(). Throws opreg::Error (kType) for objects
// that are none of these, and for layouts opreg cannot view (negative strides).
Tensor ImportForeignTensor(py::handle obj);
// Throws kValue when `obj` (imported as `imported`) is a torch tensor with the negative bit set.
// Imports ask only where public API can make such a view (see the .cc); `any_address` asks
// always (for tensors an op writes; costs a Python call per torch tensor).
void RefuseLazyNegation(py::handle obj, const Tensor& imported, bool any_address);
// True for objects ImportForeignTensor reads from C (torch tensors, NumPy arrays).
bool HasFastImport(py::handle obj);
// The DLPack C exchange table a Python type publishes (`__dlpack_c_exchange_api__`, torch 2.11
// on), nullptr when it has none; looked up once per type. GIL held.
const DLPackExchangeAPI* ExchangeApiOfType(PyTypeObject* type);
// ImportForeignTensor's first case alone, for the per-argument hot path: false (nothing done)
// when `obj`'s type has no C exchange API. `origin` is ThisCallOrigin() when the caller has it
// at hand (null: looked up here).
bool TryImportThroughExchangeApi(py::handle obj, Tensor* out, CallOrigin* origin = nullptr);
// The Python object for a result tensor: a torch tensor (zero-copy) when the call's origin is
// torch, an ndarray when it is NumPy (NumPy dtypes on CPU), a tensor of another DLPack
// producer's framework through its module's `from_dlpack` (torch before 2.11, CuPy, ...), else
// an opreg.Tensor; always an opreg.Tensor while opreg.returning_opreg_tensors() is in effect.
py::object WrapResultTensor(Tensor t);
// For a CUDA call with torch tensors: makes torch's current stream on their device opreg's
// current stream for the scope (then restores it); no-op otherwise.
class OriginStreamScope {
 public:
  OriginStreamScope();
  ~OriginStreamScope();
  OriginStreamScope(const OriginStreamScope&) = delete;
  OriginStreamScope& operator=(const OriginStreamScope&) = delete;

 private:
  int32_t device_ = -1;
  void* saved_ = nullptr;
};
void InitFrameworkTensors(py::module_& m);
void InitTorchBridge(py::module_& m);
// ---- torch_python_kernel.cc ----
void InitTorchPythonKernel(py::module_& m);
// ---- define_listener.cc ----
void InitDefineListener(py::module_& m);

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
  kLayout,
  kMemoryFormat,
  kDevice,
  kIntList,
  kFloatList,
  kBoolList,
  kStrList,
  kTensorList,
  kOptionalTensorList,
  kTuple,
  kGeneric,
};
struct ArgConv {
  Conv conv = Conv::kGeneric;
  bool optional = false;
  TypePtr tuple;  // kTuple: the schema's tuple type
};
ArgConv ArgConvFor(const Type& type);
// Converts a Python value for an argument; `where` names it in errors ("[ns::op] argument 'x'
// (#0)"), built lazily. Tensors are opreg.Tensor or DLPack producers; during a graph capture
// they become the capture's meta tensors. `origin` as in TryImportThroughExchangeApi.
IValue ToIValue(py::handle obj, ArgConv conv, const OperatorHandle* op, size_t index,
                CallOrigin* origin = nullptr);
// Converts by the Python value's own type (no schema).
IValue ToIValueGeneric(py::handle obj);
// A Python value for a boxed value: opreg.Tensor, int, float, bool, str, None, lists, tuples.
py::object FromIValue(const IValue& v);
// A return that aliases an argument (`Tensor(a!)`): the argument's tensor as it went into the
// call, and the caller's object for it (borrowed for the call; null when there is none).
struct ReturnedArgument {
  Tensor tensor;
  PyObject* object = nullptr;
};
// The Python value of an op's returns: None for none, the value for one, a tuple otherwise.
// Return r is `returned[r].object` itself while it is still that argument's tensor (as torch
// gives back the very `out` it was passed); a kernel that returned another tensor gets that
// tensor converted.
py::object ReturnsToPython(Stack& stack, const std::vector<ReturnedArgument>& returned = {});
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
// Inside a catch block of code that pybind11 does not wrap (vectorcall functions): sets the
// Python exception for the exception being handled, as pybind11's translators would.
void SetPythonErrorFromCurrentException();

// The Python exception type opreg raises for an ErrorKind (a borrowed builtin type).
PyObject* ExceptionFor(ErrorKind kind);
// The ErrorKind raised as the Python exception named `python_name` (kRuntime for other names).
ErrorKind ErrorKindNamed(const std::string& python_name);

}  // namespace opreg::python
