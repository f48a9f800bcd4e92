// Tells Python of the ops C++ code defines: a kernel library loaded with torch.ops.load_library,
// ctypes or as an extension module registers its ops as it loads, and opreg.torch makes them
// torch ops without being asked (opreg.load_library already asks).
//
// The dispatcher tells us on the defining thread, often inside dlopen (the loader's lock held)
// and maybe without the GIL, where no Python code may run. So the names are queued here and one
// pending call (Py_AddPendingCall, callable from any thread without the GIL) hands them to the
// Python callback from the interpreter's main thread at its next bytecode boundary, GIL held:
// before torch.ops.load_library or the import statement returns there.
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "module_internal.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg::python {
namespace {

std::mutex g_mu;
std::vector<std::string> g_pending;  // defined, not yet handed to the callback
bool g_scheduled = false;            // a pending call is queued
PyObject* g_callback = nullptr;      // strong reference, process lifetime (set with the GIL)

int HandOver(void* /*unused*/);

// Requires g_mu. A full queue of pending calls (rare: it holds 32) leaves the names queued for
// the next definition to schedule.
void ScheduleLocked() {
  if (g_scheduled || g_pending.empty() || InterpreterGone()) return;
  if (Py_AddPendingCall(&HandOver, nullptr) == 0) g_scheduled = true;
}

// Runs on the main thread with the GIL held. Never fails (a failure here would surface as an
// exception in whatever code the main thread happens to be running): the callback's errors
// are reported as unraisable.
int HandOver(void* /*unused*/) {
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_scheduled = false;
    names.swap(g_pending);
  }
  if (names.empty() || g_callback == nullptr || InterpreterGone()) return 0;
  // The main thread may be in the middle of raising: keep its exception aside.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(names.size()));
  if (list != nullptr) {
    for (size_t i = 0; i < names.size(); ++i) {
      PyObject* s = PyUnicode_FromStringAndSize(names[i].data(),
                                                static_cast<Py_ssize_t>(names[i].size()));
      if (s == nullptr) break;
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), s);
    }
  }
  if (list == nullptr || PyErr_Occurred()) {
    PyErr_WriteUnraisable(g_callback);
  } else if (PyObject* r = PyObject_CallOneArg(g_callback, list); r == nullptr) {
    PyErr_WriteUnraisable(g_callback);
  } else {
    Py_DECREF(r);
  }
  Py_XDECREF(list);
  PyErr_Restore(type, value, traceback);
  return 0;
}

void Queue(std::string name) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_pending.push_back(std::move(name));
  ScheduleLocked();
}

}  // namespace

void InitDefineListener(py::module_& m) {
  m.def(
      "_on_cpp_define",
      [](py::object callback) {
        PyObject* old = g_callback;
        g_callback = callback.release().ptr();
        if (old != nullptr) {
          Py_DECREF(old);  // replaced (the module was reloaded): one listener still
          return;
        }
        Dispatcher::Get().AddDefineListener(
            [](const OperatorName& name) { Queue(name.str()); });
      },
      py::arg("callback"),
      "Calls callback(names) from the main thread, soon after, for the ops defined from now on "
      "(by any code: C++ libraries as they load, opreg.Library); a second call replaces the "
      "callback.");
}

}  // namespace opreg::python
