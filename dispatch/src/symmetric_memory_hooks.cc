#include "opreg/dispatch/symmetric_memory_hooks.h"

#include <algorithm>
#include <atomic>

#include "opreg/core/error.h"

namespace opreg {
namespace {

// One slot per device type, indexed by DeviceType.
constexpr size_t kSlots = 3;
std::atomic<const SymmetricMemoryHooks*> g_hooks[kSlots] = {};

size_t Slot(DeviceType type) {
  const auto i = static_cast<size_t>(type);
  OPREG_CHECK_VALUE(i < kSlots, "symmetric memory: unknown device type ", static_cast<int>(type));
  return i;
}

}  // namespace

void SetSymmetricMemoryHooks(DeviceType type, const SymmetricMemoryHooks& hooks) {
  // Installed at load time and never freed (calls may read a slot any time).
  g_hooks[Slot(type)].store(new SymmetricMemoryHooks(hooks), std::memory_order_release);
}

const SymmetricMemoryHooks* GetSymmetricMemoryHooks(DeviceType type) {
  return g_hooks[Slot(type)].load(std::memory_order_acquire);
}

bool IsSymmetricTensor(const Tensor& t) {
  if (!t.defined()) return false;
  for (const auto& slot : g_hooks) {
    const SymmetricMemoryHooks* h = slot.load(std::memory_order_acquire);
    if (h != nullptr && h->is_symmetric != nullptr && h->is_symmetric(t)) return true;
  }
  return false;
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

std::optional<std::string> GroupNameOf(const FunctionSchema& schema, const IValue* arguments,
                                       size_t n) {
  const std::optional<size_t> i = schema.ArgumentIndex("group_name");
  if (!i || *i >= n || !arguments[*i].isString()) return std::nullopt;
  return arguments[*i].toStringRef();
}

Tensor EmptySymmetricOut(const OperatorName& op, std::string_view argument, IntArrayRef sizes,
                         DType dtype, Device device, const std::optional<std::string>& group_name) {
  const SymmetricMemoryHooks* hooks = GetSymmetricMemoryHooks(device.type);
  OPREG_CHECK(hooks != nullptr && hooks->empty != nullptr, "[", op.str(), "] argument '", argument,
              "' is a symmetric-memory argument, but no symmetric-memory backend for ",
              DeviceTypeName(device.type), " tensors is loaded (",
              device.is_cuda() ? "link opreg::symm_mem_cuda, built with OPREG_BUILD_CUDA=ON"
                               : "link opreg::symm_mem",
              ")");
  OPREG_CHECK(group_name.has_value(), "[", op.str(), "] argument '", argument,
              "' is a symmetric-memory argument, but the call has no str group_name argument to "
              "say whose symmetric heap to allocate it from");
  return hooks->empty(sizes, dtype, device, *group_name);
}

}  // namespace opreg
