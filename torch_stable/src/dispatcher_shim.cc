// torch_call_dispatcher over opreg: a stable-ABI library calls torch's aten ops (the shim's
// private table, aten_ops.h) and any opreg op by name, on a boxed StableIValue stack whose
// arguments it hands over and whose slots receive the returns.
#include <string>

#include "../include/torch/csrc/inductor/aoti_torch/c/shim.h"
#include "../include/torch/csrc/stable/c/shim.h"
#include "aten_ops.h"
#include "boxed_stack.h"
#include "opreg/core/error.h"
#include "opreg/dispatch/dispatcher.h"
#include "shim_guard.h"

namespace opreg::torch_stable {
namespace {

void CallDispatcher(const char* op_name, const char* overload_name, StableIValue* stack) {
  OPREG_CHECK_VALUE(op_name != nullptr && stack != nullptr,
                    "call_dispatcher: expected an op name and a stack");
  std::string name(op_name);
  if (overload_name != nullptr && overload_name[0] != '\0') {
    name += '.';
    name += overload_name;
  }
  if (const AtenOp* aten = FindAtenOp(name)) {
    Stack args = ArgumentsFromStable(aten->schema, stack);
    aten->run(&args);
    ReturnsToStable(aten->schema, args, stack);
    return;
  }
  std::optional<OperatorHandle> op = Dispatcher::Get().FindOp(name);
  if (!op) {
    OPREG_THROW(kKey, "call_dispatcher: no op named ", name,
                name.rfind("aten::", 0) == 0
                    ? " (opreg's stable ABI implements the aten overloads torch's stable headers "
                      "call; docs/torch_stable.md lists them)"
                    : " is defined in opreg");
  }
  const FunctionSchema& schema = op->schema();
  Stack args = ArgumentsFromStable(schema, stack);
  op->CallBoxedInPlace(&args);
  ReturnsToStable(schema, args, stack);
}

}  // namespace
}  // namespace opreg::torch_stable

using opreg::torch_stable::ShimGuard;

extern "C" {

AOTITorchError aoti_torch_call_dispatcher(const char* opName, const char* overloadName,
                                          StableIValue* stack) {
  return ShimGuard(__func__,
                   [&] { opreg::torch_stable::CallDispatcher(opName, overloadName, stack); });
}

AOTITorchError torch_call_dispatcher(const char* opName, const char* overloadName,
                                     StableIValue* stack, uint64_t /*extension_build_version*/) {
  return ShimGuard(__func__,
                   [&] { opreg::torch_stable::CallDispatcher(opName, overloadName, stack); });
}

}  // extern "C"
