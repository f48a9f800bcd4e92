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

// Never destroyed: a C++ thread may still define ops while the process exits.
std::mutex& Mu() {
  static auto* mu = new std::mutex();
  return *mu;
}
std::vector<std::string>& Pending() {  // defined, not yet handed to the callback (under Mu())
  static auto* pending = new std::vector<std::string>();
  return *pending;
}
bool g_scheduled = false;        // a pending call is queued (under Mu())
bool g_stopped = false;          // the interpreter is exiting: schedule nothing (under Mu())
PyObject* g_callback = nullptr;  // strong reference, process lifetime (set with the GIL)

int HandOver(void* /*unused*/);

// Requires Mu(). A full queue of pending calls (rare: it holds 32) leaves the names queued for
// the next definition to schedule (opreg.torch.sync() registers them at any time).
void ScheduleLocked() {
  if (g_scheduled || g_stopped || Pending().empty() || InterpreterGone()) return;
  if (Py_AddPendingCall(&HandOver, nullptr) == 0) g_scheduled = true;
}

// Runs on the main thread with the GIL held. The callback's errors are reported as unraisable
// (they would otherwise surface in whatever code the main thread happens to run), except an
// interrupt (KeyboardInterrupt, SystemExit), which is raised there as a signal's would be.
int HandOver(void* /*unused*/) {
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(Mu());
    g_scheduled = false;
    names.swap(Pending());
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
  bool interrupted = false;
  if (list == nullptr || PyErr_Occurred()) {
    PyErr_WriteUnraisable(g_callback);
  } else if (PyObject* r = PyObject_CallOneArg(g_callback, list); r != nullptr) {
    Py_DECREF(r);
  } else if (PyErr_ExceptionMatches(PyExc_Exception)) {
    PyErr_WriteUnraisable(g_callback);
  } else {
    interrupted = true;  // the callback queued the names it did not get to
  }
  Py_XDECREF(list);
  if (interrupted) {  // raised in the main thread's code, instead of what it was raising
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return -1;
  }
  PyErr_Restore(type, value, traceback);
  return 0;
}

void Queue(std::vector<std::string> names) {
  std::lock_guard<std::mutex> lock(Mu());
  for (std::string& name : names) Pending().push_back(std::move(name));
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
            [](const OperatorName& name) { Queue({name.str()}); });
      },
      py::arg("callback"),
      "Calls callback(names) from the main thread, soon after, for the ops defined from now on "
      "(by any code: C++ libraries as they load, opreg.Library); a second call replaces the "
      "callback.");
  m.def(
      "_queue_defined", [](std::vector<std::string> names) { Queue(std::move(names)); },
      py::arg("names"),
      "Hands `names` to the define callback again (it was interrupted before it got to them).");
  m.def(
      "_stop_define_listener",
      [] {
        std::lock_guard<std::mutex> lock(Mu());
        g_stopped = true;
      },
      "Schedules no more hand-overs (the interpreter is exiting).");
}

}  // namespace opreg::python
