// Functional calls resolved to out variants: when a functional op that is linked to an out
// variant has no kernel of its own for a call's key, the dispatcher runs this instead:
//   1. the functional op's meta function (its Meta kernel) sizes the outputs;
//   2. one buffer per output is allocated on the call's device (never one packed allocation);
//   3. the out variant's kernel is called with those buffers as its out arguments;
//   4. the buffers are returned (the kernel must not return or resize other tensors).
// Works for links made by PyTorch's rule and explicit (vLLM-style) ones.
#pragma once

#include <vector>

#include "absl/types/span.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {

// Appends the out op's arguments to `*dest`: the functional's arguments (moved from
// `functional_arguments`) in the out op's order, with `outs` placed at the link's out-argument
// positions.
void AppendOutVariantStack(const OutVariantLink& link, const FunctionSchema& out_schema,
                           absl::Span<IValue> functional_arguments, absl::Span<const Tensor> outs,
                           Stack* dest);

// AppendOutVariantStack into a new stack.
Stack BuildOutVariantStack(const OutVariantLink& link, const FunctionSchema& out_schema,
                           Stack functional_arguments, const std::vector<Tensor>& outs);

// Checks what an out kernel left on the stack: nothing, or exactly `outs` (same buffers, same
// sizes). Throws kRuntime naming the op and the output otherwise.
void CheckOutVariantResults(const OperatorHandle& out_op, const OutVariantLink& link,
                            const Stack& results, absl::Span<const Tensor> outs);

// The kernel the dispatcher installs for a linked functional op (see above). `functional` and
// `out` outlive it (entries are never freed).
KernelFunction MakeOutResolutionKernel(const OperatorEntry* functional, const OperatorEntry* out,
                                       OutVariantLink link);

}  // namespace opreg
