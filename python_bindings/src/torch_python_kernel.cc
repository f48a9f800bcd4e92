// opreg._C._TorchPythonKernel: the CPU/CUDA kernel opreg.torch gives a torch op whose argument
// types torch's stable C ABI cannot carry (a Scalar: opreg::add's alpha), so that the C bridge
// (torch_bridge.cc) cannot serve it. torch calls such a kernel through its Python-kernel path
// (the GIL taken, the arguments as Python objects); this one is a C callable, so that path runs
// no Python frame, in any autograd mode. It does what opreg.torch's Python kernel did:
//   1. bumps the version counter of each tensor the op writes (`Tensor(a!)`), before the call,
//      as torch's in-place ops and the C bridge do, refusing an inference tensor outside
//      inference_mode with the error those give;
//   2. calls the opreg op object (torch tensors in, torch tensors out: it answers in the
//      caller's framework, and a `Tensor(a!)` return is the caller's own tensor); for a torch op
//      declared `-> ()` (the companion of an out variant, which runs the opreg op with returns),
//      returns None;
//   3. turns an opreg tensor among the results (opreg.return_opreg_tensors() was on) into a
//      torch tensor, zero-copy.
#include <string>
#include <utility>
#include <vector>

#include "module_internal.h"
#include "opreg/core/string_util.h"

namespace opreg::python {
namespace {

class TorchPythonKernel {
 public:
  // `written`: (index, name) of each argument the op writes; `returns_nothing`: the torch op is
  // declared `-> ()`. The torch callables are passed in so that this file needs no torch
  // headers: torch._C._increment_version, torch.is_inference_mode_enabled, torch.from_dlpack
  // and the torch.Tensor type. torch calls the kernel with the GIL held (its Python-kernel
  // path takes it), from any thread; the object is immutable after construction.
  TorchPythonKernel(py::object op, std::string op_name,
                    std::vector<std::pair<Py_ssize_t, std::string>> written, bool returns_nothing,
                    py::object increment_version, py::object inference_mode_enabled,
                    py::object from_dlpack, py::object tensor_type)
      : op_(std::move(op)),
        op_name_(std::move(op_name)),
        returns_nothing_(returns_nothing),
        increment_version_(std::move(increment_version)),
        inference_mode_enabled_(std::move(inference_mode_enabled)),
        from_dlpack_(std::move(from_dlpack)),
        tensor_type_(std::move(tensor_type)) {
    OPREG_CHECK_TYPE(PyType_Check(tensor_type_.ptr()),
                     "_TorchPythonKernel: tensor_type must be a type");
    for (auto& [index, name] : written) {
      py::str key(name);  // before `name` is moved from
      written_.push_back({index, std::move(name), std::move(key)});
    }
  }

  py::object Call(const py::args& args, const py::kwargs& kwargs) const {
    if (!written_.empty()) BumpVersions(args, kwargs);
    PyObject* result = PyObject_Call(op_.ptr(), args.ptr(), kwargs.ptr());
    if (result == nullptr) throw py::error_already_set();
    if (returns_nothing_) {
      Py_DECREF(result);
      return py::none();
    }
    return AsTorch(py::reinterpret_steal<py::object>(result));
  }

 private:
  struct Written {
    Py_ssize_t index;
    std::string name;
    py::str key;  // `name` as a Python string, for kwargs lookups
  };

  bool IsTorchTensor(py::handle v) const {
    return PyObject_TypeCheck(v.ptr(), reinterpret_cast<PyTypeObject*>(tensor_type_.ptr()));
  }

  // The written tensors, collected first and bumped in one call, so that a refused argument
  // leaves every counter as it was (as the Python kernel did).
  void BumpVersions(const py::args& args, const py::kwargs& kwargs) const {
    py::list tensors;
    int inference_mode = -1;  // unknown until an inference tensor asks
    for (const Written& w : written_) {
      py::handle value;
      if (w.index < static_cast<Py_ssize_t>(args.size())) {
        value = args[static_cast<size_t>(w.index)];
      } else if (PyObject* v = PyDict_GetItemWithError(kwargs.ptr(), w.key.ptr())) {
        value = v;
      } else if (PyErr_Occurred()) {
        throw py::error_already_set();
      } else {
        continue;
      }
      auto add = [&](py::handle t) {
        if (!IsTorchTensor(t)) return;
        if (py::cast<bool>(t.attr("is_inference")())) {
          if (inference_mode < 0) inference_mode = py::cast<bool>(inference_mode_enabled_());
          if (inference_mode == 0) {
            // torch's own words for an in-place op on an inference tensor, named for the op.
            PyErr_SetString(PyExc_RuntimeError,
                            StrCat("[", op_name_, "] argument '", w.name, "' (#", w.index,
                                   ") was written: Inplace update to inference tensor outside "
                                   "InferenceMode is not allowed.You can make a clone to get a "
                                   "normal tensor before doing inplace update.")
                                .c_str());
            throw py::error_already_set();
          }
        }
        tensors.append(t);
      };
      if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
        for (py::handle item : value) add(item);
      } else {
        add(value);
      }
    }
    if (!tensors.empty()) increment_version_(tensors);
  }

  // The results with each opreg tensor as a torch tensor (lists and tuples keep their type).
  py::object AsTorch(py::object value) const {
    if (AsPyTensor(value) != nullptr) return from_dlpack_(value);
    const bool list = PyList_CheckExact(value.ptr());
    if (!list && !PyTuple_CheckExact(value.ptr())) return value;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(value.ptr());
    PyObject** items = PySequence_Fast_ITEMS(value.ptr());
    Py_ssize_t first = 0;  // the first item that changes; most results have none
    while (first < n && !NeedsConversion(items[first])) ++first;
    if (first == n) return value;
    py::object out = list ? py::object(py::list(n)) : py::object(py::tuple(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      py::object item = AsTorch(py::reinterpret_borrow<py::object>(items[i]));
      PyObject* raw = item.release().ptr();
      if (list) {
        PyList_SET_ITEM(out.ptr(), i, raw);
      } else {
        PyTuple_SET_ITEM(out.ptr(), i, raw);
      }
    }
    return out;
  }

  static bool NeedsConversion(PyObject* item) {
    if (AsPyTensor(item) != nullptr) return true;
    if (!PyList_CheckExact(item) && !PyTuple_CheckExact(item)) return false;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(item);
    PyObject** items = PySequence_Fast_ITEMS(item);
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (NeedsConversion(items[i])) return true;
    }
    return false;
  }

  py::object op_;
  std::string op_name_;
  std::vector<Written> written_;
  bool returns_nothing_;
  py::object increment_version_;
  py::object inference_mode_enabled_;
  py::object from_dlpack_;
  py::object tensor_type_;
};

}  // namespace

void InitTorchPythonKernel(py::module_& m) {
  py::class_<TorchPythonKernel>(m, "_TorchPythonKernel",
                                "A torch op's CPU/CUDA kernel called through torch's "
                                "Python-kernel path with no Python frame (opreg.torch).")
      .def(py::init<py::object, std::string, std::vector<std::pair<Py_ssize_t, std::string>>, bool,
                    py::object, py::object, py::object, py::object>(),
           py::arg("op"), py::arg("op_name"), py::arg("written"), py::arg("returns_nothing"),
           py::arg("increment_version"), py::arg("inference_mode_enabled"), py::arg("from_dlpack"),
           py::arg("tensor_type"))
      .def("__call__", &TorchPythonKernel::Call);
}

}  // namespace opreg::python
