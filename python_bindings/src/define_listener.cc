// The dispatcher's op event stream (Dispatcher::Subscribe), handed to Python: every op defined
// or undefined by any code (a kernel library loaded with torch.ops.load_library, ctypes or as
// an extension module registers its ops as it loads; opreg.Library from Python). opreg._op_events
// fans them out (opreg.torch follows them) and replays the ops defined before each follower.
//
// The dispatcher tells us on the defining thread, often inside dlopen (the loader's lock held)
// and maybe without the GIL, where no Python code may run. So the events are queued here and
// one pending call (Py_AddPendingCall, callable from any thread without the GIL) hands them to
// the Python callback from the interpreter's main thread at its next bytecode boundary, GIL
// held: before torch.ops.load_library or the import statement returns there. A Python caller
// that has just defined ops (opreg.Library.define, opreg.load_library) hands them over at once
// with _deliver_op_events, on its own thread: delivered synchronously where the GIL is held.
// The same queue carries opreg.library's "kernels" events (an op's Python CompositeImplicit
// kernels changed), so that a follower sees them in order with the definitions, and so that one
// raised in a garbage collector's finalizer waits for a bytecode boundary too.
#include <algorithm>
#include <iterator>
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
// An event: (its kind, the op's name). The kinds are static strings: "defined" and "undefined"
// from the dispatcher, "kernels" from opreg.library (an op's Python CompositeImplicit kernels
// changed; see opreg._op_events).
using Event = std::pair<const char*, std::string>;
constexpr const char* kKinds[] = {"defined", "undefined", "kernels"};
std::vector<Event>& Pending() {  // not yet handed to the callback (under Mu())
  static auto* pending = new std::vector<Event>();
  return *pending;
}
bool g_scheduled = false;        // a pending call is queued (under Mu())
bool g_stopped = false;          // the interpreter is exiting: schedule nothing (under Mu())
PyObject* g_callback = nullptr;  // strong reference, process lifetime (set with the GIL)

int HandOver(void* /*unused*/);

// Requires Mu(). A full queue of pending calls (rare: it holds 32) leaves the events queued for
// the next one to schedule (or a _deliver_op_events call).
void ScheduleLocked() {
  if (g_scheduled || g_stopped || Pending().empty() || InterpreterGone()) return;
  if (Py_AddPendingCall(&HandOver, nullptr) == 0) g_scheduled = true;
}

// Runs on the main thread with the GIL held. The callback's errors are reported as unraisable
// (they would otherwise surface in whatever code the main thread happens to run), except an
// interrupt (KeyboardInterrupt, SystemExit), which is raised there as a signal's would be.
int HandOver(void* /*unused*/) {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(Mu());
    g_scheduled = false;
    events.swap(Pending());
  }
  if (events.empty() || g_callback == nullptr || InterpreterGone()) return 0;
  // The main thread may be in the middle of raising: keep its exception aside.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(events.size()));
  if (list != nullptr) {
    for (size_t i = 0; i < events.size(); ++i) {
      PyObject* kind = PyUnicode_FromString(events[i].first);
      PyObject* name = PyUnicode_FromStringAndSize(
          events[i].second.data(), static_cast<Py_ssize_t>(events[i].second.size()));
      PyObject* item = kind != nullptr && name != nullptr ? PyTuple_Pack(2, kind, name) : nullptr;
      Py_XDECREF(kind);
      Py_XDECREF(name);
      if (item == nullptr) break;
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
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
    interrupted = true;  // the callback queued the events it did not get to
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

void Queue(std::vector<Event> events) {
  std::lock_guard<std::mutex> lock(Mu());
  for (Event& e : events) Pending().push_back(std::move(e));
  ScheduleLocked();
}

}  // namespace

void InitDefineListener(py::module_& m) {
  m.def(
      "_subscribe_op_events",
      [](py::object callback) {
        PyObject* old = g_callback;
        g_callback = callback.release().ptr();
        if (old != nullptr) {
          Py_DECREF(old);  // replaced (the module was reloaded): one subscription still
          return;
        }
        Dispatcher::Get().Subscribe(
            [](Dispatcher::OpEvent kind, const OperatorName& name) {
              Queue({Event{kind == Dispatcher::OpEvent::kDefined ? kKinds[0] : kKinds[1],
                           name.str()}});
            },
            /*replay=*/false);  // opreg._op_events replays for each follower
      },
      py::arg("callback"),
      "Calls callback([(kind, name), ...]) with the op events ('defined' / 'undefined') from now "
      "on: from the main thread soon after, or at once through _deliver_op_events. A second "
      "call replaces the callback.");
  m.def(
      "_deliver_op_events",
      [] {
        if (HandOver(nullptr) != 0) throw py::error_already_set();
      },
      "Hands the queued op events to the callback now, on this thread (the GIL held).");
  m.def(
      "_queue_op_events",
      [](const std::vector<std::pair<std::string, std::string>>& events) {
        std::vector<Event> queued;
        for (const auto& [kind, name] : events) {
          const char* const* known = std::find(std::begin(kKinds), std::end(kKinds), kind);
          if (known == std::end(kKinds)) {
            throw Error(ErrorKind::kValue, "unknown op event kind '" + kind +
                                               "' (expected defined, undefined or kernels)");
          }
          queued.emplace_back(*known, name);
        }
        Queue(std::move(queued));
      },
      py::arg("events"),
      "Queues `events` ([(kind, name), ...], kind 'defined', 'undefined' or 'kernels') for the "
      "callback: one it was interrupted before getting to, or a kernel change from Python.");
  m.def(
      "_stop_define_listener",
      [] {
        std::lock_guard<std::mutex> lock(Mu());
        g_stopped = true;
      },
      "Schedules no more hand-overs (the interpreter is exiting).");
}

}  // namespace opreg::python
