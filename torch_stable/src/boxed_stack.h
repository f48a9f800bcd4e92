// Moving one call between opreg's boxed Stack and the stable ABI's StableIValue stack, by the
// op's schema, in both directions: opreg calling a stable-ABI kernel (library_shim.cc) and a
// stable-ABI library calling an op (dispatcher_shim.cc).
#pragma once

#include <vector>

#include "../include/torch/csrc/inductor/aoti_torch/c/shim.h"
#include "opreg/core/ivalue.h"
#include "opreg/schema/function_schema.h"

namespace opreg::torch_stable {

// The last arguments().size() entries of `stack` as new StableIValues (max(args, returns)
// slots); they are removed from `stack`.
std::vector<StableIValue> TakeArgumentsToStable(const FunctionSchema& schema, Stack* stack);
// Reads the returns from `slots` (taking their handles over) and pushes them onto `stack`.
void PushReturnsFromStable(const FunctionSchema& schema, const StableIValue* slots, Stack* stack);
// The arguments in `slots` (taking their handles over) as IValues.
Stack ArgumentsFromStable(const FunctionSchema& schema, const StableIValue* slots);
// Writes `returns` into `slots` as new StableIValues.
void ReturnsToStable(const FunctionSchema& schema, const Stack& returns, StableIValue* slots);

}  // namespace opreg::torch_stable
