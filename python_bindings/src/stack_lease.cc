// The thread call state behind StackLease: one boxed stack per thread, reused by every call on
// it. A call from Python or through torch's dispatcher otherwise allocates and frees a vector of
// IValues each time, as much as the rest of a no-op call's own work.
//
// The state is plain thread-local data (the stack in raw bytes): reaching it costs one
// thread-local lookup and no initialisation guard, where a thread_local Stack costs a guard check
// and a second lookup on every call. A separate thread-local object with a destructor, created
// with the stack, frees it at thread exit.
#include <new>

#include "module_internal.h"

namespace opreg::python {
namespace {

struct ThreadCallStateCleanup {
  ~ThreadCallStateCleanup() {
    if (t_call_state.made) t_call_state.stack()->~Stack();
    t_call_state.made = false;
  }
};

}  // namespace

ThreadCallState* MakeThreadCallState() {
  thread_local ThreadCallStateCleanup cleanup;
  (void)cleanup;
  ThreadCallState* state = &t_call_state;
  new (state->raw) Stack();
  state->argument_cache = RecycledTensors::ThisThreadCache(RecyclePool::kArguments);
  state->made = true;
  return state;
}

}  // namespace opreg::python
