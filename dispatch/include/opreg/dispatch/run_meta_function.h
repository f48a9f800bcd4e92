// Running an op's meta function: its Meta-key kernel, called on meta tensors (shapes, strides
// and dtypes, no data). This is how a functional call learns its outputs' sizes before calling
// its out variant, and how graph capture learns every value's shape.
#pragma once

#include <vector>

#include "opreg/core/ivalue.h"
#include "opreg/core/tensor.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {

// A copy of a boxed value with every tensor replaced by a meta tensor of the same sizes,
// strides and dtype (lists of tensors included). Other values are shared.
IValue ToMeta(const IValue& value);

// Calls `op`'s Meta kernel on meta copies of `arguments` (the op's full argument list) and
// returns its results (meta tensors for tensor returns). Throws kNotImplemented naming the op
// when it has no Meta kernel (or composite kernel), and kRuntime when the meta function returns
// something other than one tensor per tensor return.
// The meta copies of the arguments are made from this thread's recycled tensor objects
// (RecycledTensors) and given back when the call ends: no heap allocation per tensor argument.
Stack RunMetaFunction(const OperatorHandle& op, const Stack& arguments);
// The same for the `n` arguments at `arguments`.
Stack RunMetaFunction(const OperatorHandle& op, const IValue* arguments, size_t n);

// True for ops whose output sizes depend on the data (PyTorch's `dynamic_output_shape` and
// `data_dependent_output` tags): their meta function cannot size the outputs in advance.
bool HasDataDependentOutput(const OpDefinition& def);

}  // namespace opreg
