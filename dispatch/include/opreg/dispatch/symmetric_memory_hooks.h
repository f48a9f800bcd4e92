// Symmetric memory as seen from the dispatcher and the planner.
//
// An out argument registered as a symmetric-memory argument of its op (register_symm_mem_args,
// required or accepted) is allocated from the symmetric heap of the call's group (its
// `str group_name` argument) whenever the runtime allocates it: by functional -> out resolution
// and by the planner (at plan time, outside the arena), on the call's device. The allocation
// itself belongs to a symm_mem backend, which sits above dispatch and installs the hooks of its
// device type when it is loaded (the host backend for CPU, the CUDA VMM backend for CUDA).
//
// Thread safety: SetSymmetricMemoryHooks is called at load time (a later call for the same
// device type replaces the hooks; the old ones stay valid); the getters are lock-free.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "opreg/core/tensor.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {

struct SymmetricMemoryHooks {
  // A tensor on `device` in the symmetric memory of group `group_name` (a collective call on
  // every rank); throws opreg::Error when the group cannot serve that device.
  Tensor (*empty)(IntArrayRef sizes, DType dtype, Device device,
                  std::string_view group_name) = nullptr;
  bool (*is_symmetric)(const Tensor& t) = nullptr;
};

// Installs the backend for tensors of `type` (kCPU: host, kCUDA: CUDA).
void SetSymmetricMemoryHooks(DeviceType type, const SymmetricMemoryHooks& hooks);
// Null until a backend for `type` is loaded.
const SymmetricMemoryHooks* GetSymmetricMemoryHooks(DeviceType type);
// True when some loaded backend says `t` lives in its symmetric memory.
bool IsSymmetricTensor(const Tensor& t);

// True when `argument` of `op` is registered as a symmetric-memory argument (either kind).
bool IsSymmetricArgument(const OperatorName& op, std::string_view argument);

// The value of the op's `str group_name` argument in a call (its `n` arguments), or nullopt.
std::optional<std::string> GroupNameOf(const FunctionSchema& schema, const IValue* arguments,
                                       size_t n);

// Allocates a symmetric out buffer on `device`; throws kRuntime naming the op and argument when
// no backend for the device's type is loaded or the call has no group_name.
Tensor EmptySymmetricOut(const OperatorName& op, std::string_view argument, IntArrayRef sizes,
                         DType dtype, Device device, const std::optional<std::string>& group_name);

}  // namespace opreg
