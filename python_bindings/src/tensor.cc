// opreg.Tensor: metadata, DLPack export/import (the capsule protocol), NumPy views, factories.
#include <pybind11/numpy.h>

#include <atomic>
#include <sstream>

#include "module_internal.h"
#include "opreg/core/dlpack.h"
#include "opreg/core/error.h"
#include "opreg/core/tensor_factories.h"

namespace opreg::python {

namespace {

PyTypeObject* g_tensor_type = nullptr;

// Exported capsules whose deleter has not run yet, and deleter calls so far (test hooks).
std::atomic<int64_t> g_live_exports{0};
std::atomic<int64_t> g_export_deleter_calls{0};

// Wraps core's DLManagedTensor so that the deleter calls are counted.
struct CountedExport {
  DLManagedTensor outer;
  DLManagedTensor* inner;
};

void CountedDeleter(DLManagedTensor* self) {
  auto* e = static_cast<CountedExport*>(self->manager_ctx);
  if (e->inner->deleter != nullptr) e->inner->deleter(e->inner);
  delete e;
  g_live_exports.fetch_sub(1, std::memory_order_relaxed);
  g_export_deleter_calls.fetch_add(1, std::memory_order_relaxed);
}

// The capsule's destructor: frees the tensor unless a consumer took it ("used_dltensor").
void CapsuleDestructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (m == nullptr) {
    PyErr_WriteUnraisable(capsule);
    return;
  }
  if (m->deleter != nullptr) m->deleter(m);
}

py::capsule ExportCapsule(const Tensor& t) {
  OPREG_CHECK_VALUE(t.defined(), "__dlpack__: the tensor is undefined");
  OPREG_CHECK_VALUE(!t.is_meta(), "__dlpack__: meta tensors have no data to export (", t.ToString(),
                    ")");
  DLManagedTensor* inner = ToDLPack(t);
  auto* e = new CountedExport{};
  e->inner = inner;
  e->outer.dl_tensor = inner->dl_tensor;
  e->outer.manager_ctx = e;
  e->outer.deleter = &CountedDeleter;
  g_live_exports.fetch_add(1, std::memory_order_relaxed);
  PyObject* cap = PyCapsule_New(&e->outer, "dltensor", &CapsuleDestructor);
  if (cap == nullptr) {
    CountedDeleter(&e->outer);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

// A versioned export: the DLManagedTensorVersioned, the tensor that keeps the data alive and
// the shape/strides it points at, freed together.
struct VersionedExport {
  DLManagedTensorVersioned managed{};
  Tensor tensor;
  std::vector<int64_t> sizes;
};

void DeleteVersionedExport(DLManagedTensorVersioned* self) {
  delete static_cast<VersionedExport*>(self->manager_ctx);
  g_live_exports.fetch_sub(1, std::memory_order_relaxed);
  g_export_deleter_calls.fetch_add(1, std::memory_order_relaxed);
}

void VersionedCapsuleDestructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor_versioned")) return;
  auto* m =
      static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
  if (m == nullptr) {
    PyErr_WriteUnraisable(capsule);
    return;
  }
  if (m->deleter != nullptr) m->deleter(m);
}

void ReleaseImportedVersioned(void* context) {
  auto* m = static_cast<DLManagedTensorVersioned*>(context);
  if (m->deleter != nullptr) m->deleter(m);
}

// Takes ownership of the DLManagedTensorVersioned of a "dltensor_versioned" capsule.
Tensor ImportVersionedCapsule(py::handle capsule) {
  auto* m = static_cast<DLManagedTensorVersioned*>(
      PyCapsule_GetPointer(capsule.ptr(), "dltensor_versioned"));
  if (m == nullptr) throw py::error_already_set();
  Tensor t = ImportVersioned(m);  // on error the capsule keeps `m` and frees it
  PyCapsule_SetName(capsule.ptr(), "used_dltensor_versioned");
  return t;
}

py::capsule ExportVersionedCapsule(const Tensor& t, bool copied) {
  DLManagedTensorVersioned* m = ExportVersioned(t, copied);
  PyObject* cap = PyCapsule_New(m, "dltensor_versioned", &VersionedCapsuleDestructor);
  if (cap == nullptr) {
    m->deleter(m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

// Takes ownership of the tensor of a "dltensor" (legacy) or "dltensor_versioned" capsule.
Tensor ImportCapsule(py::handle capsule) {
  if (PyCapsule_IsValid(capsule.ptr(), "used_dltensor") ||
      PyCapsule_IsValid(capsule.ptr(), "used_dltensor_versioned")) {
    throw Error(ErrorKind::kValue,
                "from_dlpack: this DLPack capsule was already consumed (it can be used once)");
  }
  if (PyCapsule_IsValid(capsule.ptr(), "dltensor_versioned")) {
    return ImportVersionedCapsule(capsule);
  }
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    throw Error(ErrorKind::kType,
                "from_dlpack: expected a DLPack capsule named 'dltensor' or 'dltensor_versioned'");
  }
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  absl::StatusOr<Tensor> t = FromDLPack(m);
  // On error FromDLPack did not take ownership: the capsule keeps it and frees it.
  CheckStatus(t.status());
  // The tensor owns it now; renaming tells the capsule's destructor not to free it.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  return *std::move(t);
}

// True when a `max_version` argument of __dlpack__ asks for DLPack 1.x or later.
bool WantsVersioned(py::handle max_version) {
  if (max_version.is_none()) return false;
  py::tuple v = py::reinterpret_borrow<py::object>(max_version).cast<py::tuple>();
  OPREG_CHECK_VALUE(v.size() >= 1, "__dlpack__: max_version must be a (major, minor) tuple");
  return v[0].cast<int64_t>() >= 1;
}

std::string DTypeStr(DType d) { return std::string(TorchDTypeName(d)); }

}  // namespace

DType ParseDTypeArg(py::handle obj) {
  if (obj.is_none()) return DType::kFloat32;
  std::string s = py::str(obj);  // "float32", "f32", "torch.float32", numpy dtypes
  absl::StatusOr<DType> d = ParseDType(s);
  CheckStatus(d.status());
  return *d;
}

Device ParseDeviceArg(py::handle obj) {
  if (obj.is_none()) return Device::cpu();
  std::string s = py::str(obj);
  absl::StatusOr<Device> d = Device::Parse(s);
  CheckStatus(d.status());
  return *d;
}

std::vector<int64_t> ShapeArg(py::handle obj) {
  // Each size through __index__, checked against int64's range, so that a bad shape says which
  // size is wrong (pybind11's cast only says "Unable to cast").
  auto size_of = [](py::handle v, size_t index) -> int64_t {
    if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr())) {
      throw Error(ErrorKind::kType, StrCat("shape: size #", index, " must be an int, got ",
                                           py::str(py::type::handle_of(v)).cast<std::string>()));
    }
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
    if (!i) throw py::error_already_set();
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow != 0) {
      throw Error(ErrorKind::kValue,
                  StrCat("shape: size #", index, " = ", py::str(i).cast<std::string>(),
                         " is out of int64's range"));
    }
    if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
    return n;
  };
  if (PyIndex_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) return {size_of(obj, 0)};
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr())) {
    throw Error(ErrorKind::kType, StrCat("shape: expected an int or a sequence of ints, got ",
                                         py::str(py::type::handle_of(obj)).cast<std::string>()));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  std::vector<int64_t> out;
  out.reserve(seq.size());
  for (size_t i = 0; i < seq.size(); ++i) out.push_back(size_of(seq[i], i));
  return out;
}

namespace {

py::tuple ToTuple(IntArrayRef v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
  return t;
}

}  // namespace

Tensor ImportVersioned(DLManagedTensorVersioned* m) {
  if (m->version.major != DLPACK_MAJOR_VERSION) {
    throw Error(ErrorKind::kValue,
                StrCat("from_dlpack: the tensor is DLPack ", m->version.major, ".",
                       m->version.minor, "; opreg reads DLPack ", DLPACK_MAJOR_VERSION, ".x"));
  }
  absl::StatusOr<Tensor> t = FromDLTensor(m->dl_tensor, m, &ReleaseImportedVersioned);
  CheckStatus(t.status());
  if (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
    ThisCallOrigin().last_import_readonly = true;
    t->storage().unsafe_get()->set_read_only(true);  // a fresh storage of this import
  }
  return *std::move(t);
}

DLManagedTensorVersioned* ExportVersioned(const Tensor& tensor, bool copied) {
  OPREG_CHECK_VALUE(tensor.defined(), "__dlpack__: the tensor is undefined");
  OPREG_CHECK_VALUE(!tensor.is_meta(), "__dlpack__: meta tensors have no data to export (",
                    tensor.ToString(), ")");
  auto e = std::make_unique<VersionedExport>();
  e->tensor = tensor;
  e->sizes.resize(2 * static_cast<size_t>(tensor.dim()));
  DescribeDLTensor(tensor, e->sizes.data(), e->sizes.data() + tensor.dim(), &e->managed.dl_tensor);
  e->managed.version.major = DLPACK_MAJOR_VERSION;
  e->managed.version.minor = DLPACK_MINOR_VERSION;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = &DeleteVersionedExport;
  e->managed.flags = (copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0) |
                     (tensor.storage().read_only() ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
  g_live_exports.fetch_add(1, std::memory_order_relaxed);
  return &e.release()->managed;
}

// An ndarray over the tensor's memory whose base keeps the tensor alive, writable unless the
// memory was lent read-only. (NumPy marks
// arrays imported through legacy DLPack read-only, so this goes through the array API.)
py::object NumpyView(py::object self) {
  const Tensor& t = AsPyTensor(self)->tensor;
  OPREG_CHECK_VALUE(t.is_cpu(),
                    "numpy(): only CPU tensors can be viewed from NumPy (this one "
                    "is on ",
                    t.device().str(), ")");
  const DType d = t.dtype();
  OPREG_CHECK_TYPE(d != DType::kBFloat16 && d != DType::kFloat8E4M3FN && d != DType::kFloat8E5M2,
                   "numpy(): NumPy has no dtype ", TorchDTypeName(d));
  py::dtype dt(std::string(TorchDTypeName(d)));
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : t.strides()) strides.push_back(static_cast<py::ssize_t>(s * t.itemsize()));
  py::array a(dt, shape, strides, t.data_ptr(), self);
  // Memory lent read-only stays read-only in NumPy's view of it.
  if (t.storage().read_only()) a.attr("flags").attr("writeable") = false;
  return a;
}

py::object WrapTensor(Tensor t) {
  if (!t.defined()) return py::none();
  return py::cast(PyTensor{std::move(t), -1, 0});
}

py::object WrapProxy(Tensor t, int32_t value, uint64_t graph) {
  return py::cast(PyTensor{std::move(t), value, graph});
}

namespace {
PyTensor* PyTensorOf(py::handle obj) {
  auto* inst = reinterpret_cast<py::detail::instance*>(obj.ptr());
  return static_cast<PyTensor*>(inst->get_value_and_holder().value_ptr());
}
}  // namespace

PyTensor* ExactPyTensor(py::handle obj) {
  return Py_TYPE(obj.ptr()) == g_tensor_type ? PyTensorOf(obj) : nullptr;
}

PyTensor* AsPyTensor(py::handle obj) {
  PyTypeObject* type = Py_TYPE(obj.ptr());
  if (type != g_tensor_type && !PyType_IsSubtype(type, g_tensor_type)) return nullptr;
  return PyTensorOf(obj);
}

bool IsDLPackProducer(py::handle obj) {
  return HasFastImport(obj) || PyCapsule_CheckExact(obj.ptr()) || py::hasattr(obj, "__dlpack__");
}

Tensor TensorFromDLPack(py::handle obj) {
  if (PyCapsule_CheckExact(obj.ptr())) return ImportCapsule(obj);
  py::object fn = py::getattr(obj, "__dlpack__", py::none());
  if (fn.is_none()) {
    throw Error(ErrorKind::kType,
                StrCat("expected an opreg.Tensor or an object with __dlpack__ "
                       "(NumPy array, torch tensor), got ",
                       std::string(py::str(py::type::handle_of(obj).attr("__name__")))));
  }
  // DLPack 1.x first (versioned capsule, read-only flag); producers older than the
  // max_version keyword raise TypeError and are asked again for a legacy capsule.
  py::object capsule;
  PyObject* kw =
      Py_BuildValue("{s:(ii)}", "max_version", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  if (kw == nullptr) throw py::error_already_set();
  PyObject* empty = PyTuple_New(0);
  PyObject* r = PyObject_Call(fn.ptr(), empty, kw);
  Py_DECREF(empty);
  Py_DECREF(kw);
  if (r != nullptr) {
    capsule = py::reinterpret_steal<py::object>(r);
  } else if (PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    capsule = fn();
  } else {
    throw py::error_already_set();
  }
  return ImportCapsule(capsule);
}

void InitTensor(py::module_& m) {
  py::class_<PyTensor> cls(m, "Tensor", "An opreg tensor (CPU, CUDA or meta).");
  g_tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  cls.def_property_readonly(
         "shape", [](const PyTensor& self) { return ToTuple(self.tensor.sizes()); },
         "Sizes, as a tuple of ints.")
      .def_property_readonly("strides",
                             [](const PyTensor& self) { return ToTuple(self.tensor.strides()); })
      .def_property_readonly("dtype",
                             [](const PyTensor& self) { return DTypeStr(self.tensor.dtype()); })
      .def_property_readonly("device",
                             [](const PyTensor& self) { return self.tensor.device().str(); })
      .def_property_readonly("ndim", [](const PyTensor& self) { return self.tensor.dim(); })
      .def_property_readonly("itemsize",
                             [](const PyTensor& self) { return self.tensor.itemsize(); })
      .def_property_readonly("nbytes", [](const PyTensor& self) { return self.tensor.nbytes(); })
      .def_property_readonly("is_proxy", [](const PyTensor& self) { return self.value >= 0; })
      .def("numel", [](const PyTensor& self) { return self.tensor.numel(); })
      .def("dim", [](const PyTensor& self) { return self.tensor.dim(); })
      .def(
          "size",
          [](const PyTensor& self, py::object dim) -> py::object {
            if (dim.is_none()) return ToTuple(self.tensor.sizes());
            return py::int_(self.tensor.size(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def("is_contiguous", [](const PyTensor& self) { return self.tensor.is_contiguous(); })
      .def("data_ptr",
           [](const PyTensor& self) { return reinterpret_cast<uintptr_t>(self.tensor.data_ptr()); })
      .def("_is_alias_of",
           [](const PyTensor& self, const PyTensor& other) {
             return self.tensor.is_alias_of(other.tensor);
           })
      .def("_storage_use_count",
           [](const PyTensor& self) { return self.tensor.storage().use_count(); })
      .def("clone", [](const PyTensor& self) { return WrapTensor(self.tensor.clone()); })
      .def("contiguous", [](const PyTensor& self) { return WrapTensor(self.tensor.contiguous()); })
      .def("view",
           [](const PyTensor& self, py::args shape) {
             std::vector<int64_t> s = shape.size() == 1 && !PyLong_Check(shape[0].ptr())
                                          ? shape[0].cast<std::vector<int64_t>>()
                                          : shape.cast<std::vector<int64_t>>();
             return WrapTensor(self.tensor.view(s));
           })
      .def("reshape",
           [](const PyTensor& self, py::args shape) {
             std::vector<int64_t> s = shape.size() == 1 && !PyLong_Check(shape[0].ptr())
                                          ? shape[0].cast<std::vector<int64_t>>()
                                          : shape.cast<std::vector<int64_t>>();
             return WrapTensor(self.tensor.reshape(s));
           })
      .def("narrow",
           [](const PyTensor& self, int64_t dim, int64_t start, int64_t length) {
             return WrapTensor(self.tensor.narrow(dim, start, length));
           })
      .def("select", [](const PyTensor& self, int64_t dim,
                        int64_t index) { return WrapTensor(self.tensor.select(dim, index)); })
      .def("copy_",
           [](py::object self, py::handle src) {
             AsPyTensor(self)->tensor.copy_(ToTensor(src));
             return self;
           })
      .def("item", [](const PyTensor& self) { return self.tensor.item(); })
      .def(
          "new_empty",
          [](const PyTensor& self, py::object shape, py::object dtype) {
            DType d = dtype.is_none() ? self.tensor.dtype() : ParseDTypeArg(dtype);
            return WrapTensor(empty(ShapeArg(shape), d, self.tensor.device()));
          },
          py::arg("shape"), py::arg("dtype") = py::none())
      .def(
          "__dlpack__",
          [](const PyTensor& self, py::object stream, py::object max_version, py::object dl_device,
             py::object copy) {
            const bool copied = !copy.is_none() && copy.cast<bool>();
            const Tensor& t = copied ? self.tensor.clone() : self.tensor;
            if (WantsVersioned(max_version)) return ExportVersionedCapsule(t, copied);
            return ExportCapsule(t);
          },
          py::arg("stream") = py::none(), py::kw_only(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
          "Exports a DLPack capsule sharing this tensor's memory: versioned ('dltensor_versioned', "
          "writable) when max_version asks for DLPack 1.x, else legacy ('dltensor').")
      .def("__dlpack_device__",
           [](const PyTensor& self) {
             const Device d = self.tensor.device();
             OPREG_CHECK_VALUE(!d.is_meta(),
                               "__dlpack_device__: meta tensors have no device "
                               "memory");
             int type = d.is_cuda() ? static_cast<int>(kDLCUDA) : static_cast<int>(kDLCPU);
             int index = d.is_cuda() ? std::max<int>(d.index, 0) : 0;
             return py::make_tuple(type, index);
           })
      .def(
          "numpy", [](py::object self) { return NumpyView(self); },
          "A NumPy array sharing this tensor's memory (CPU tensors of NumPy dtypes).")
      .def(
          "__array__",
          [](py::object self, py::object dtype, py::object copy) {
            py::object a = NumpyView(self);
            if (!dtype.is_none()) a = a.attr("astype")(dtype);
            if (!copy.is_none() && copy.cast<bool>()) a = a.attr("copy")();
            return a;
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("__len__",
           [](const PyTensor& self) {
             OPREG_CHECK_TYPE(self.tensor.dim() > 0, "len() of a 0-d tensor");
             return self.tensor.size(0);
           })
      .def("__repr__", [](py::object self) -> std::string {
        const PyTensor& p = *AsPyTensor(self);
        const Tensor& t = p.tensor;
        if (!t.defined()) return "opreg.Tensor(undefined)";
        std::ostringstream os;
        os << "opreg.Tensor(";
        bool values = false;
        if (t.is_cpu() && t.numel() <= 1000) {
          try {
            py::object a = NumpyView(self);
            std::string s = py::str(py::module_::import("numpy").attr("array2string")(
                a, py::arg("separator") = ", ", py::arg("prefix") = "opreg.Tensor("));
            os << s << ", ";
            values = true;
          } catch (py::error_already_set&) {
          } catch (const Error&) {
          }
        }
        if (!values) {
          os << "shape=(";
          for (int64_t i = 0; i < t.dim(); ++i) os << (i ? ", " : "") << t.size(i);
          os << (t.dim() == 1 ? ",)" : ")") << ", ";
        }
        os << "dtype=" << TorchDTypeName(t.dtype()) << ", device=" << t.device().str();
        if (p.value >= 0) os << ", graph_value=%" << p.value;
        os << ")";
        return os.str();
      });

  m.def(
      "from_dlpack",
      [](py::handle obj) -> py::object {
        if (AsPyTensor(obj) != nullptr) return py::reinterpret_borrow<py::object>(obj);
        CallOriginScope isolate(/*op_call=*/false);
        return WrapTensor(ImportForeignTensor(obj));
      },
      py::arg("obj"),
      "An opreg.Tensor sharing the memory of a DLPack producer (NumPy array, torch tensor, "
      "or a 'dltensor' capsule, which is consumed).");
  m.def(
      "empty",
      [](py::object shape, py::object dtype, py::object device) {
        return WrapTensor(empty(ShapeArg(shape), ParseDTypeArg(dtype), ParseDeviceArg(device)));
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def(
      "zeros",
      [](py::object shape, py::object dtype, py::object device) {
        return WrapTensor(zeros(ShapeArg(shape), ParseDTypeArg(dtype), ParseDeviceArg(device)));
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def(
      "ones",
      [](py::object shape, py::object dtype, py::object device) {
        return WrapTensor(ones(ShapeArg(shape), ParseDTypeArg(dtype), ParseDeviceArg(device)));
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def(
      "full",
      [](py::object shape, py::object value, py::object dtype, py::object device) {
        // A Python int stays exact (a double would round it past 2^53); one beyond int64 is
        // out of range for every integral dtype.
        Scalar fill;
        if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
          int overflow = 0;
          const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
          if (overflow != 0) {
            const double d = PyLong_AsDouble(value.ptr());  // past int64: float dtypes only
            if (PyErr_Occurred()) {
              PyErr_Clear();
              throw Error(ErrorKind::kValue, "full(): fill_value is too large for any dtype");
            }
            fill = Scalar(d);
          } else {
            fill = Scalar(static_cast<int64_t>(v));
          }
        } else {
          fill = Scalar(value.cast<double>());
        }
        return WrapTensor(
            full(ShapeArg(shape), fill, ParseDTypeArg(dtype), ParseDeviceArg(device)));
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none(),
      py::arg("device") = py::none());
  m.def(
      "arange",
      [](int64_t end, py::object dtype, py::object device) {
        return WrapTensor(arange(end, dtype.is_none() ? DType::kInt64 : ParseDTypeArg(dtype),
                                 ParseDeviceArg(device)));
      },
      py::arg("end"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def(
      "empty_like", [](const PyTensor& like) { return WrapTensor(empty_like(like.tensor)); },
      py::arg("like"));
  m.def(
      "_dlpack_live_exports", []() { return g_live_exports.load(); },
      "Exported DLPack capsules whose deleter has not run yet (test hook).");
  m.def(
      "_dlpack_deleter_calls", []() { return g_export_deleter_calls.load(); },
      "Deleter calls of exported DLPack tensors so far (test hook).");
}

}  // namespace opreg::python
