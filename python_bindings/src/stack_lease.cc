// StackLease: one boxed stack per thread, reused by every call on it. A call from Python or
// through torch's dispatcher otherwise allocates and frees a vector of IValues each time, as much
// as the rest of a no-op call's own work.
#include "module_internal.h"

namespace opreg::python {
namespace {

struct ThreadStack {
  Stack stack;
  bool busy = false;
};
thread_local ThreadStack t_stack;

}  // namespace

StackLease::StackLease() {
  ThreadStack& t = t_stack;
  if (t.busy) {
    stack_ = &own_;
    busy_ = nullptr;
  } else {
    t.busy = true;
    stack_ = &t.stack;
    busy_ = &t.busy;
  }
}

}  // namespace opreg::python
