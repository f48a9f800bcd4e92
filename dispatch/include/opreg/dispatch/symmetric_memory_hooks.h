// Symmetric memory as seen from the dispatcher and the planner.
//
// An out argument registered as a symmetric-memory argument of its op (register_symm_mem_args,
// required or accepted) is allocated from the symmetric heap of the call's group (its
// `str group_name` argument) whenever the runtime allocates it: by functional -> out resolution
// and by the planner (at plan time, outside the arena). The allocation itself belongs to the
// symm_mem layer, which sits above dispatch and installs these hooks when it is loaded.
//
// Thread safety: SetSymmetricMemoryHooks is called once at load time; the getters are lock-free.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "opreg/core/tensor.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {

struct SymmetricMemoryHooks {
  // A tensor in the symmetric heap of `group_name` (a collective call on every rank).
  Tensor (*empty)(IntArrayRef sizes, DType dtype, std::string_view group_name) = nullptr;
  bool (*is_symmetric)(const Tensor& t) = nullptr;
};

void SetSymmetricMemoryHooks(const SymmetricMemoryHooks& hooks);
// Null until the symm_mem layer is loaded.
const SymmetricMemoryHooks* GetSymmetricMemoryHooks();

// True when `argument` of `op` is registered as a symmetric-memory argument (either kind).
bool IsSymmetricArgument(const OperatorName& op, std::string_view argument);

// The value of the op's `str group_name` argument in a call, or nullopt.
std::optional<std::string> GroupNameOf(const FunctionSchema& schema, const Stack& arguments);

// Allocates a symmetric out buffer; throws kRuntime naming the op and argument when the
// symm_mem layer is not loaded or the call has no group_name.
Tensor EmptySymmetricOut(const OperatorName& op, std::string_view argument, IntArrayRef sizes,
                         DType dtype, const std::optional<std::string>& group_name);

}  // namespace opreg
