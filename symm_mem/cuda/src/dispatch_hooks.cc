// Installs the CUDA backend's symmetric-memory hooks for CUDA tensors when this library is
// loaded: registered symmetric outs of CUDA calls (functional -> out resolution, planned
// graphs) are then allocated from their CudaGroup, on the group's device.
#include "opreg/core/error.h"
#include "opreg/dispatch/symmetric_memory_hooks.h"
#include "opreg/symm_mem/cuda/cuda_group.h"

namespace opreg::symm_mem::cuda {
namespace {

Tensor EmptyFromCudaGroup(IntArrayRef sizes, DType dtype, Device device,
                          std::string_view group_name) {
  std::shared_ptr<CudaGroup> g = CudaGroup::Get(group_name);
  OPREG_CHECK_VALUE(device.is_cuda() && (device.index < 0 || device.index == g->device()),
                    "symm_mem (cuda): group '", group_name, "' allocates on cuda:", g->device(),
                    ", not on ", device.str());
  return empty(sizes, dtype, group_name);
}

const bool kHooksInstalled = [] {
  SetSymmetricMemoryHooks(DeviceType::kCUDA,
                          SymmetricMemoryHooks{&EmptyFromCudaGroup, &IsSymmetric});
  return true;
}();

}  // namespace
}  // namespace opreg::symm_mem::cuda
