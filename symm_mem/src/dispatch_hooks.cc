// Installs the symmetric-memory hooks of the dispatcher and the planner when this library is
// loaded: registered symmetric outs are then allocated from their group's symmetric heap.
#include "opreg/dispatch/symmetric_memory_hooks.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace opreg::symm_mem {
namespace {

Tensor EmptyFromGroup(IntArrayRef sizes, DType dtype, std::string_view group_name) {
  return empty(sizes, dtype, group_name);
}

const bool kHooksInstalled = [] {
  SetSymmetricMemoryHooks(SymmetricMemoryHooks{&EmptyFromGroup, &IsSymmetric});
  return true;
}();

}  // namespace
}  // namespace opreg::symm_mem
