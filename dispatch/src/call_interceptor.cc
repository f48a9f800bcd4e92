// The per-thread call interceptor (call_interceptor.h). The global counter lets calls skip the
// thread-local lookup entirely while no thread captures, which is the common case.
#include "opreg/dispatch/call_interceptor.h"

#include "opreg/core/error.h"

namespace opreg {
namespace detail {
std::atomic<int> g_installed_call_interceptors{0};
}  // namespace detail

namespace {
// The installed interceptor, and whether it is suspended (SuspendCallInterception nests).
thread_local CallInterceptor* t_installed = nullptr;
thread_local CallInterceptor* t_active = nullptr;
}  // namespace

CallInterceptor* CurrentCallInterceptor() { return t_active; }

CallInterceptorGuard::CallInterceptorGuard(CallInterceptor* interceptor) {
  OPREG_CHECK_VALUE(interceptor != nullptr, "CallInterceptorGuard: null interceptor");
  OPREG_CHECK_VALUE(t_installed == nullptr,
                    "a graph capture (call interceptor) is already active on this thread; "
                    "captures do not nest");
  t_installed = interceptor;
  t_active = interceptor;
  detail::g_installed_call_interceptors.fetch_add(1, std::memory_order_relaxed);
}

CallInterceptorGuard::~CallInterceptorGuard() {
  t_installed = nullptr;
  t_active = nullptr;
  detail::g_installed_call_interceptors.fetch_sub(1, std::memory_order_relaxed);
}

SuspendCallInterception::SuspendCallInterception() : saved_(t_active) { t_active = nullptr; }
SuspendCallInterception::~SuspendCallInterception() { t_active = saved_; }

}  // namespace opreg
