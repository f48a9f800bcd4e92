// A per-thread hook on op calls: while a CallInterceptor is installed on a thread, every call of
// an op made on that thread (boxed or unboxed, from C++ or Python) goes to the interceptor
// instead of a kernel. The planner's CaptureScope (opreg/planner/capture_scope.h) is one: it
// records ordinary calls as a graph.
//
// Cost when no interceptor is installed anywhere: one relaxed load of a global counter and a
// branch per call. When one is installed on some thread, other threads also read their own
// thread-local pointer, and their calls run as usual.
//
// Errors: CallInterceptorGuard throws kValue when the thread already has an interceptor
// (interceptors do not nest). Whatever Intercept throws reaches the caller of the op.
// Ownership: a guard does not own its interceptor; the interceptor must outlive the guard.
// Thread safety: installation is per thread; a guard must be destroyed on the thread that made
// it. Interceptors only see calls from their own thread.
#pragma once

#include <atomic>

#include "opreg/core/ivalue.h"

namespace opreg {

class OperatorHandle;

class CallInterceptor {
 public:
  virtual ~CallInterceptor() = default;
  // Called instead of the kernel. `stack` holds the op's full argument list (defaults filled,
  // types checked against the schema); replace it with the op's returns. Interception is
  // suspended on this thread while it runs, so the op calls it makes are real calls.
  virtual void Intercept(const OperatorHandle& op, Stack* stack) = 0;
};

namespace detail {
// How many interceptors are installed, over all threads: the calls' cheap first test.
extern std::atomic<int> g_installed_call_interceptors;
inline bool AnyCallInterceptor() {
  return g_installed_call_interceptors.load(std::memory_order_relaxed) != 0;
}
}  // namespace detail

// The interceptor installed on this thread and not suspended, or null.
CallInterceptor* CurrentCallInterceptor();

// Installs `interceptor` on this thread for the guard's lifetime.
class CallInterceptorGuard {
 public:
  explicit CallInterceptorGuard(CallInterceptor* interceptor);
  ~CallInterceptorGuard();
  CallInterceptorGuard(const CallInterceptorGuard&) = delete;
  CallInterceptorGuard& operator=(const CallInterceptorGuard&) = delete;
};

// Suspends this thread's interceptor (if any) for the guard's lifetime: calls made meanwhile
// run their kernels. Used by the dispatcher around Intercept, and by code that must run ops
// for real inside a capture.
class SuspendCallInterception {
 public:
  SuspendCallInterception();
  ~SuspendCallInterception();
  SuspendCallInterception(const SuspendCallInterception&) = delete;
  SuspendCallInterception& operator=(const SuspendCallInterception&) = delete;

 private:
  CallInterceptor* saved_;
};

}  // namespace opreg
