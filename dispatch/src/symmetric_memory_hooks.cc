#include "opreg/dispatch/symmetric_memory_hooks.h"

#include <algorithm>
#include <atomic>

#include "opreg/core/error.h"

namespace opreg {
namespace {

std::atomic<const SymmetricMemoryHooks*> g_hooks{nullptr};

}  // namespace

void SetSymmetricMemoryHooks(const SymmetricMemoryHooks& hooks) {
  // Installed once per process, at load time, and never freed (calls may read it any time).
  g_hooks.store(new SymmetricMemoryHooks(hooks), std::memory_order_release);
}

const SymmetricMemoryHooks* GetSymmetricMemoryHooks() {
  return g_hooks.load(std::memory_order_acquire);
}

bool IsSymmetricArgument(const OperatorName& op, std::string_view argument) {
  for (SymmMemRequirement r : {SymmMemRequirement::kRequired, SymmMemRequirement::kAccepted}) {
    const std::optional<SymmMemArgsInfo> info = Dispatcher::Get().SymmMemArgsOf(op, r);
    if (info && std::find(info->names.begin(), info->names.end(), argument) != info->names.end()) {
      return true;
    }
  }
  return false;
}

std::optional<std::string> GroupNameOf(const FunctionSchema& schema, const Stack& arguments) {
  const std::optional<size_t> i = schema.ArgumentIndex("group_name");
  if (!i || *i >= arguments.size() || !arguments[*i].isString()) return std::nullopt;
  return arguments[*i].toStringRef();
}

Tensor EmptySymmetricOut(const OperatorName& op, std::string_view argument, IntArrayRef sizes,
                         DType dtype, const std::optional<std::string>& group_name) {
  const SymmetricMemoryHooks* hooks = GetSymmetricMemoryHooks();
  OPREG_CHECK(hooks != nullptr && hooks->empty != nullptr, "[", op.str(), "] argument '", argument,
              "' is a symmetric-memory argument, but opreg's symm_mem library is not loaded");
  OPREG_CHECK(group_name.has_value(), "[", op.str(), "] argument '", argument,
              "' is a symmetric-memory argument, but the call has no str group_name argument to "
              "say whose symmetric heap to allocate it from");
  return hooks->empty(sizes, dtype, *group_name);
}

}  // namespace opreg
