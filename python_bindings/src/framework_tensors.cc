// Tensors of other frameworks in and out of opreg calls. The `__dlpack__` protocol costs a
// Python-level call and a capsule per tensor (about 3 us for torch); torch (2.11 on) publishes a
// C function table on its tensor type, `__dlpack_c_exchange_api__`, and NumPy arrays expose
// their memory through the buffer protocol, so both are read here from C with no Python call.
// Results go back the same way: a torch tensor from the table's to-Python function, an ndarray
// view for NumPy callers.
#include <array>
#include <utility>
#include <vector>

#include "module_internal.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/core/dlpack.h"
#include "opreg/core/error.h"

namespace opreg::python {

namespace {

thread_local CallOrigin t_origin;
thread_local bool t_return_opreg = false;

// Exchange tables by Python type, nullptr for types without one. Looked up once per type (the
// attribute lives on the type, as the DLPack spec requires); the types are kept alive so their
// addresses are never reused by another type. Only touched with the GIL held.
std::vector<std::pair<PyTypeObject*, const DLPackExchangeAPI*>>& ApiCache() {
  static auto* cache = new std::vector<std::pair<PyTypeObject*, const DLPackExchangeAPI*>>();
  return *cache;
}

const DLPackExchangeAPI* LookUpExchangeApi(PyTypeObject* type) {
  PyObject* attr =
      PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__dlpack_c_exchange_api__");
  if (attr == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  void* p = nullptr;
  if (PyCapsule_IsValid(attr, "dlpack_exchange_api")) {
    p = PyCapsule_GetPointer(attr, "dlpack_exchange_api");
  } else if (PyLong_Check(attr)) {
    p = PyLong_AsVoidPtr(attr);
  }
  Py_DECREF(attr);
  if (p == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  // A producer newer than this header chains its older tables; take the one of our major.
  auto* header = static_cast<DLPackExchangeAPIHeader*>(p);
  while (header != nullptr && header->version.major > DLPACK_MAJOR_VERSION) {
    header = header->prev_api;
  }
  if (header == nullptr || header->version.major != DLPACK_MAJOR_VERSION) return nullptr;
  return reinterpret_cast<const DLPackExchangeAPI*>(header);
}

const DLPackExchangeAPI* ExchangeApiOf(PyTypeObject* type) {
  auto& cache = ApiCache();
  for (const auto& [t, api] : cache) {
    if (t == type) return api;
  }
  const DLPackExchangeAPI* api = LookUpExchangeApi(type);
  Py_INCREF(type);
  cache.emplace_back(type, api);
  return api;
}

// numpy.ndarray, or nullptr when NumPy cannot be imported (it is a dependency, but a broken
// install must not make every foreign tensor fail).
PyTypeObject* NdarrayType() {
  static PyTypeObject* type = []() -> PyTypeObject* {
    PyObject* numpy = PyImport_ImportModule("numpy");
    if (numpy == nullptr) {
      PyErr_Clear();
      return nullptr;
    }
    PyObject* nd = PyObject_GetAttrString(numpy, "ndarray");
    Py_DECREF(numpy);
    if (nd == nullptr) PyErr_Clear();
    return reinterpret_cast<PyTypeObject*>(nd);  // kept: a new reference never dropped
  }();
  return type;
}

// The owner of an imported framework tensor's memory: a reference to the Python tensor,
// dropped (with the GIL) when the last opreg tensor viewing it dies.
void ReleasePyObject(void* context) {
  if (PyGILState_Check()) {  // the common case: the call's stack dies with the GIL held
    Py_DECREF(static_cast<PyObject*>(context));
    return;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(context));
  PyGILState_Release(gil);
}

// The owner releases for tensors an op call gives back at its end, where the GIL is held: the
// check above costs more than the rest of the release (RecycleScope::ReleaseAtEndWith).
void DecrefHoldingGil(void* context) { Py_DECREF(static_cast<PyObject*>(context)); }

void NoteOrigin(CallOrigin& o, const DLPackExchangeAPI* api, const DLTensor& dl) {
  if (o.api == nullptr) o.api = api;
  if (o.cuda_device < 0 && dl.device.device_type == kDLCUDA) o.cuda_device = dl.device.device_id;
}

// The tensor this call already made for `obj` (the same tensor object passed twice: one
// import, and the arguments alias as they do in the framework), or nullptr.
const Tensor* ImportedInThisCall(const RecycleScope* recycle, py::handle obj) {
  return recycle != nullptr ? recycle->Find(obj.ptr()) : nullptr;
}

// A producer's refusal to export a tensor (a torch meta tensor, a byte-swapped NumPy array) as
// an opreg error, which the argument's conversion prefixes with the op and argument. Only the
// first line of the producer's message is kept: torch's carries a C++ backtrace after it.
[[noreturn]] void ThrowExportRefused(py::error_already_set& e, py::handle obj) {
  if (!e.matches(PyExc_Exception)) throw e;  // KeyboardInterrupt and the like stay as they are
  std::string message = py::str(e.value());
  message = message.substr(0, message.find('\n'));
  py::handle type = py::type::handle_of(obj);
  const std::string module = py::str(py::getattr(type, "__module__", py::str("?")));
  const std::string name = py::str(py::getattr(type, "__qualname__", py::str("?")));
  throw Error(ErrorKind::kValue, StrCat("expected a tensor its producer can export through "
                                        "DLPack; ",
                                        module, ".", name, " refused: ", message));
}

// The table's non-owning view (no allocation on the producer's side) when it has one: the
// opreg tensor then keeps the Python tensor object alive, as a DLPack export would keep the
// framework's tensor. Otherwise an owning DLManagedTensorVersioned.
Tensor ImportThroughApi(py::handle obj, const DLPackExchangeAPI* api, CallOrigin& o) {
  RecycleScope* recycle = o.recycle;
  if (const Tensor* kept = ImportedInThisCall(recycle, obj)) return *kept;
  if (api->dltensor_from_py_object_no_sync != nullptr) {
    DLTensor dl{};
    if (api->dltensor_from_py_object_no_sync(obj.ptr(), &dl) != 0) {
      if (!PyErr_Occurred()) {
        throw Error(ErrorKind::kRuntime, StrCat(Py_TYPE(obj.ptr())->tp_name,
                                                "'s DLPack exchange failed and set no error"));
      }
      py::error_already_set e;
      ThrowExportRefused(e, obj);
    }
    absl::StatusOr<Tensor> t =
        FromDLTensor(dl, obj.ptr(), &ReleasePyObject, recycle, /*source=*/obj.ptr());
    CheckStatus(t.status());
    Py_INCREF(obj.ptr());  // now owned by the tensor's storage
    NoteOrigin(o, api, dl);
    return *std::move(t);
  }
  DLManagedTensorVersioned* m = nullptr;
  if (api->managed_tensor_from_py_object_no_sync(obj.ptr(), &m) != 0 || m == nullptr) {
    if (!PyErr_Occurred()) {
      throw Error(ErrorKind::kRuntime, StrCat(Py_TYPE(obj.ptr())->tp_name,
                                              "'s DLPack exchange gave no tensor and no error"));
    }
    py::error_already_set e;
    ThrowExportRefused(e, obj);
  }
  Tensor t;
  try {
    t = ImportVersioned(m);
  } catch (...) {
    if (m->deleter != nullptr) m->deleter(m);
    throw;
  }
  NoteOrigin(o, api, m->dl_tensor);  // `m` lives as long as `t`
  return t;
}

// The buffer of a NumPy array, released (with the GIL) when the last tensor viewing it dies.
struct BufferOwner {
  Py_buffer view;
};

void ReleaseBuffer(void* context) {
  auto* owner = static_cast<BufferOwner*>(context);
  if (PyGILState_Check()) {  // the common case, as in ReleasePyObject
    PyBuffer_Release(&owner->view);
  } else {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyBuffer_Release(&owner->view);
    PyGILState_Release(gil);
  }
  delete owner;
}

// ReleaseBuffer at the end of an op call, with the GIL held.
void ReleaseBufferHoldingGil(void* context) {
  auto* owner = static_cast<BufferOwner*>(context);
  PyBuffer_Release(&owner->view);
  delete owner;
}

// The DLPack dtype of a buffer's struct-module format, or lanes 0 when opreg has no such dtype
// (the caller then takes the DLPack path, which names the dtype in its error).
DLDataType BufferDType(const char* format, Py_ssize_t itemsize) {
  DLDataType t{0, static_cast<uint8_t>(itemsize * 8), 0};
  if (format == nullptr) return t;
  if (*format == '<' || *format == '=' || *format == '@') ++format;
  if (format[0] == '\0' || format[1] != '\0') return t;
  switch (format[0]) {
    case 'e':
    case 'f':
    case 'd':
      t.code = kDLFloat;
      break;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
      t.code = kDLInt;
      break;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
      t.code = kDLUInt;
      break;
    case '?':
      t.code = kDLPackBoolCode;
      break;
    default:
      return t;
  }
  t.lanes = 1;
  return t;
}

// A NumPy array through the buffer protocol; false (nothing taken, no error set) for arrays
// the protocol cannot describe to opreg (other dtypes, negative or unaligned strides).
bool ImportBuffer(py::handle obj, Tensor* out, CallOrigin& o) {
  RecycleScope* recycle = o.recycle;
  if (const Tensor* kept = ImportedInThisCall(recycle, obj)) {  // (only writable arrays are kept)
    *out = *kept;
    return true;
  }
  auto owner = std::make_unique<BufferOwner>();
  bool readonly = false;
  if (PyObject_GetBuffer(obj.ptr(), &owner->view, PyBUF_RECORDS) != 0) {
    PyErr_Clear();
    if (PyObject_GetBuffer(obj.ptr(), &owner->view, PyBUF_RECORDS_RO) != 0) {
      PyErr_Clear();
      return false;
    }
    readonly = true;
  }
  Py_buffer& v = owner->view;
  DLDataType dtype = BufferDType(v.format, v.itemsize);
  constexpr int kMaxDims = 64;  // NumPy's own limit
  std::array<int64_t, kMaxDims> shape, strides;
  bool ok = dtype.lanes == 1 && v.ndim <= kMaxDims && FromDLDataType(dtype).ok();
  for (int d = 0; ok && d < v.ndim; ++d) {
    shape[d] = v.shape[d];
    ok = v.strides[d] >= 0 && v.strides[d] % v.itemsize == 0;
    strides[d] = v.strides[d] / v.itemsize;
  }
  if (!ok) {
    PyBuffer_Release(&v);
    return false;
  }
  DLTensor dl{};
  dl.data = v.buf;
  dl.device = {kDLCPU, 0};
  dl.ndim = v.ndim;
  dl.dtype = dtype;
  dl.shape = shape.data();
  dl.strides = strides.data();
  // A read-only array is not found again: its flag must be raised for every argument it is.
  absl::StatusOr<Tensor> t =
      FromDLTensor(dl, owner.get(), &ReleaseBuffer, recycle, readonly ? nullptr : obj.ptr());
  if (!t.ok()) {
    PyBuffer_Release(&v);
    CheckStatus(t.status());
  }
  owner.release();
  o.numpy = true;
  if (readonly) {
    o.last_import_readonly = true;
    t->storage().unsafe_get()->set_read_only(true);  // a fresh storage (never recycled)
  }
  *out = *std::move(t);
  return true;
}

// The `from_dlpack` of the framework a producer type belongs to (its top-level module's), or
// None; looked up once per type. Only touched with the GIL held.
py::object FrameworkFromDLPack(PyTypeObject* type) {
  static auto* cache = new std::vector<std::pair<PyTypeObject*, py::object>>();
  for (const auto& [t, fn] : *cache) {
    if (t == type) return fn;
  }
  py::object fn = py::none();
  py::object module = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(type))
                          .attr("__dict__")
                          .attr("get")("__module__", py::none());
  if (py::isinstance<py::str>(module)) {
    const std::string name = module.cast<std::string>();
    const std::string top = name.substr(0, name.find('.'));
    py::object modules = py::module_::import("sys").attr("modules");
    py::object mod = modules.attr("get")(top, py::none());
    if (!mod.is_none()) fn = py::getattr(mod, "from_dlpack", py::none());
  }
  Py_INCREF(type);
  cache->emplace_back(type, fn);
  return fn;
}

// A producer's tensor through __dlpack__; a torch tensor that requires grad refuses to export
// (BufferError) and is exported detached, as the exchange API of newer torch does.
Tensor ImportThroughDLPack(py::handle obj) {
  try {
    return TensorFromDLPack(obj);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_BufferError) || !py::hasattr(obj, "detach")) ThrowExportRefused(e, obj);
  }
  try {
    return TensorFromDLPack(obj.attr("detach")());
  } catch (py::error_already_set& e) {
    ThrowExportRefused(e, obj);
  }
}

bool IsNumpyDType(DType d) {
  return d != DType::kBFloat16 && d != DType::kFloat8E4M3FN && d != DType::kFloat8E5M2;
}

}  // namespace

// Not inlined: each inlined use of a thread-local in a shared library is its own
// __tls_get_addr call, so the per-argument paths take this once and pass the reference on.
__attribute__((noinline)) CallOrigin& ThisCallOrigin() { return t_origin; }

void ReleaseAtEndHoldingGil(RecycleScope* scope) {
  scope->ReleaseAtEndWith(&ReleasePyObject, &DecrefHoldingGil);
  scope->ReleaseAtEndWith(&ReleaseBuffer, &ReleaseBufferHoldingGil);
}

bool HasFastImport(py::handle obj) {
  PyTypeObject* type = Py_TYPE(obj.ptr());
  return type == NdarrayType() || ExchangeApiOf(type) != nullptr;
}

const DLPackExchangeAPI* ExchangeApiOfType(PyTypeObject* type) { return ExchangeApiOf(type); }

// torch's lazily negated views share memory with their base and only flag the negation; DLPack
// has no such flag, so an import would read the values un-negated. Refused, naming the fix.
// Asking the tensor (is_neg) costs more than the rest of the import, so it is asked only where
// a negated view can be: torch's public API makes one only as `.imag` of a conjugated complex
// tensor (and views of that), whose elements all sit at odd positions of the complex storage's
// real view, so its data pointer is an odd multiple of the element size. Aligned tensors, the
// usual case, cost nothing. A tensor an op writes (`any_address`) is always asked, since
// writing through an undetected negated view would corrupt the caller's data: so torch's private
// `_neg_view()` of aligned memory goes undetected only where an op reads it (read un-negated).
void RefuseLazyNegation(py::handle obj, const Tensor& imported, bool any_address) {
  const uintptr_t item = ItemSize(imported.dtype());
  const uintptr_t address = reinterpret_cast<uintptr_t>(imported.data_ptr());
  if (imported.numel() == 0 || item == 0) return;
  if (!any_address && address % (2 * item) != item) return;
  struct Cache {
    PyObject* type = nullptr;    // strong reference, so the address is never reused under us
    PyObject* is_neg = nullptr;  // the type's is_neg, or null when it has none
  };
  static thread_local Cache cache;
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  if (type != cache.type) {
    Py_XDECREF(cache.type);
    Py_XDECREF(cache.is_neg);
    Py_INCREF(type);
    cache.type = type;
    cache.is_neg = PyObject_GetAttrString(type, "is_neg");
    if (cache.is_neg == nullptr) PyErr_Clear();
  }
  if (cache.is_neg == nullptr) return;  // NumPy, JAX, ...: no negated views
  PyObject* r = PyObject_CallOneArg(cache.is_neg, obj.ptr());
  if (r == nullptr) throw py::error_already_set();
  const bool negated = r == Py_True;
  Py_DECREF(r);
  if (negated) {
    throw Error(ErrorKind::kValue,
                "the tensor is a lazily negated view (torch's negative bit is set, as for "
                "z.conj().imag), which DLPack cannot carry; pass t.resolve_neg()");
  }
}

bool TryImportThroughExchangeApi(py::handle obj, Tensor* out, CallOrigin* origin) {
  const DLPackExchangeAPI* api = ExchangeApiOf(Py_TYPE(obj.ptr()));
  if (api == nullptr) return false;
  *out = ImportThroughApi(obj, api, origin != nullptr ? *origin : ThisCallOrigin());
  RefuseLazyNegation(obj, *out, /*any_address=*/false);
  return true;
}

Tensor ImportForeignTensor(py::handle obj) {
  Tensor t;
  if (TryImportThroughExchangeApi(obj, &t)) return t;
  CallOrigin& o = ThisCallOrigin();
  PyTypeObject* type = Py_TYPE(obj.ptr());
  const bool ndarray = type == NdarrayType();
  if (ndarray && ImportBuffer(obj, &t, o)) return t;
  t = ImportThroughDLPack(obj);
  if (!ndarray && !PyCapsule_CheckExact(obj.ptr())) {
    RefuseLazyNegation(obj, t, /*any_address=*/false);
  }
  if (ndarray) {
    o.numpy = true;
  } else if (o.dlpack_type == nullptr && !PyCapsule_CheckExact(obj.ptr())) {
    o.dlpack_type = type;
  }
  return t;
}

py::object WrapResultTensor(Tensor t) {
  if (!t.defined()) return py::none();
  const CallOrigin& o = t_origin;
  if (o.op_call && !t_return_opreg && !t.is_meta()) {
    if (o.api != nullptr) {
      DLManagedTensorVersioned* m = ExportVersioned(t, /*copied=*/false);
      void* out = nullptr;
      // The table's function takes ownership of `m`, also when it fails.
      if (o.api->managed_tensor_to_py_object_no_sync(m, &out) != 0 || out == nullptr) {
        throw py::error_already_set();
      }
      return py::reinterpret_steal<py::object>(static_cast<PyObject*>(out));
    }
    if (o.dlpack_type != nullptr) {
      py::object from_dlpack = FrameworkFromDLPack(o.dlpack_type);
      if (!from_dlpack.is_none()) return from_dlpack(WrapTensor(std::move(t)));
    }
    if (o.numpy && t.is_cpu() && IsNumpyDType(t.dtype()))
      return NumpyView(WrapTensor(std::move(t)));
  }
  return WrapTensor(std::move(t));
}

OriginStreamScope::OriginStreamScope() {
  const CallOrigin& o = t_origin;
  if (o.api == nullptr || o.cuda_device < 0) return;
  void* stream = nullptr;
  if (o.api->current_work_stream(kDLCUDA, o.cuda_device, &stream) != 0) {
    throw py::error_already_set();
  }
  saved_ = CurrentCudaStream(o.cuda_device);
  device_ = o.cuda_device;
  SetCurrentCudaStream(device_, static_cast<CudaStreamHandle>(stream));
}

OriginStreamScope::~OriginStreamScope() {
  if (device_ >= 0) SetCurrentCudaStream(device_, static_cast<CudaStreamHandle>(saved_));
}

void InitFrameworkTensors(py::module_& m) {
  m.def(
      "_set_return_opreg_tensors",
      [](bool on) {
        const bool old = t_return_opreg;
        t_return_opreg = on;
        return old;
      },
      py::arg("on"),
      "Makes this thread's op calls return opreg.Tensor whatever their inputs were (True) or "
      "tensors of the caller's framework (False, the default); returns the previous setting.");
  m.def(
      "_recycled_tensors_cached", [] { return RecycledTensors::CachedOnThisThread(); },
      "How many tensor objects this thread keeps for the framework tensor arguments of its next "
      "calls (for tests).");
  m.def(
      "_has_fast_import", [](py::handle obj) { return HasFastImport(obj); }, py::arg("obj"),
      "True when `obj` converts without a Python-level call: a torch tensor (C exchange API) "
      "or a NumPy array (buffer protocol).");
}

}  // namespace opreg::python
