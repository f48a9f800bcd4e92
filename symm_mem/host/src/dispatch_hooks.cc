// Installs the host backend's symmetric-memory hooks for CPU tensors when this library is
// loaded: registered symmetric outs of CPU calls are then allocated from their group's heap.
#include "opreg/core/error.h"
#include "opreg/dispatch/symmetric_memory_hooks.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace opreg::symm_mem {
namespace {

Tensor EmptyFromGroup(IntArrayRef sizes, DType dtype, Device device, std::string_view group_name) {
  OPREG_CHECK_VALUE(device.is_cpu(), "symm_mem: the host backend allocates CPU tensors, not ",
                    device.str(), " (group '", group_name, "')");
  return empty(sizes, dtype, group_name);
}

const bool kHooksInstalled = [] {
  SetSymmetricMemoryHooks(DeviceType::kCPU, SymmetricMemoryHooks{&EmptyFromGroup, &IsSymmetric});
  return true;
}();

}  // namespace
}  // namespace opreg::symm_mem
