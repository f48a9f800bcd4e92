// Error translation: opreg::Error (and absl::Status, through ThrowIfError) to Python
// exceptions by ErrorKind. Python exceptions raised inside Python kernels travel through the
// C++ dispatcher as py::error_already_set and are restored unchanged (type, value, traceback)
// by pybind11 when they reach the Python caller.
#include "module_internal.h"
#include "opreg/core/error.h"

namespace opreg::python {

PyObject* ExceptionFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kValue:
      return PyExc_ValueError;
    case ErrorKind::kType:
      return PyExc_TypeError;
    case ErrorKind::kIndex:
      return PyExc_IndexError;
    case ErrorKind::kKey:
      return PyExc_KeyError;
    case ErrorKind::kNotImplemented:
      return PyExc_NotImplementedError;
    case ErrorKind::kRuntime:
      break;
  }
  return PyExc_RuntimeError;
}

ErrorKind ErrorKindNamed(const std::string& python_name) {
  if (python_name == "ValueError") return ErrorKind::kValue;
  if (python_name == "TypeError") return ErrorKind::kType;
  if (python_name == "IndexError") return ErrorKind::kIndex;
  if (python_name == "KeyError") return ErrorKind::kKey;
  if (python_name == "NotImplementedError") return ErrorKind::kNotImplemented;
  return ErrorKind::kRuntime;
}

void CheckStatus(const absl::Status& status) { ThrowIfError(status); }

void SetPythonErrorFromCurrentException() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const Error& e) {
    PyErr_SetString(ExceptionFor(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

void InitErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(ExceptionFor(e.kind()), e.what());
    }
  });
  // Test hook: raises the Python exception of an ErrorKind name, as C++ code would.
  m.def(
      "_raise_error",
      [](const std::string& kind, const std::string& message) {
        throw Error(ErrorKindNamed(kind), message);
      },
      py::arg("kind"), py::arg("message"));
  // Test hook: raises the Python exception of an absl::Status code (by its number).
  m.def(
      "_raise_status",
      [](int code, const std::string& message) {
        CheckStatus(absl::Status(static_cast<absl::StatusCode>(code), message));
      },
      py::arg("code"), py::arg("message"));
}

}  // namespace opreg::python
