// Rules a schema must follow beyond its grammar, checked when an op is defined or linked: the
// aliasing rule, out-variant links (out_variant.h), symmetric-memory argument lists
// (symm_mem_args.h) and op tags. This header includes the other two, so it is the one to use.
//
// Every rule is a pure function over parsed schemas that returns absl::Status / StatusOr and
// never throws. Errors are absl::InvalidArgumentError whose message names the op
// (`[mylib::f.out]`), the argument (`'eps' (#2)`) or return (`return #0`), what was expected and
// what was found.
//
// Thread safety: all functions are reentrant; they read only their arguments (and immutable
// static tables).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "opreg/schema/function_schema.h"
#include "opreg/schema/out_variant.h"
#include "opreg/schema/symm_mem_args.h"

namespace opreg {

// The aliasing rule: an op that mutates an argument must not also return an alias of it.
//
// A return whose alias sets (its own and those of its list elements, `*` excluded) name a set of a
// written argument (`(Tensor(a!) x) -> Tensor(a!)`, also `-> Tensor(a)`) is refused with
//   [mylib::f] return #0 aliases mutated argument 'x' (#0): an op that mutates its inputs must
//   not return them; return () instead (out variants, whose keyword-only Tensor(a!) outs are
//   returned in order, are the exception)
// Allowed:
//  - returns aliasing out arguments (`Argument::is_out()`: keyword-only and written), as every
//    out variant does (`f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)`). That the outs are
//    returned in order is checked by MatchOutVariant, not here;
//  - ops named as out variants (`*_out`, overload `out` or `*_out`) with no keyword-only outs:
//    their outs are positional, as in PyTorch's symm_mem ops (`one_shot_all_reduce_out(..., Tensor(a!) out)
//    -> Tensor(a!)`);
//  - in-place ops, whose name (before the overload) ends in `_`: ATen's
//    `add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)` and every in-place op of the ATen corpus
//    return their mutated `self`, which torchgen allows for the in-place convention;
//  - read-only alias returns (views: `(Tensor(a) x) -> Tensor(a)`);
//  - `Tensor!` arguments: the shorthand makes a fresh set that no return can name.
absl::Status CheckAliasingRule(const FunctionSchema& schema);

// The op tags opreg accepts: PyTorch 2.6's `tags.yaml` (inplace_view, pt2_compliant_tag,
// view_copy, dynamic_output_shape, data_dependent_output, generated, nondeterministic_seeded,
// nondeterministic_bitwise, needs_fixed_stride_order, flexible_layout, core, pointwise,
// maybe_aliasing_or_mutating) plus `out_variant` (newer PyTorch) and `needs_contiguous_strides`.
// In that order; the views point to static storage.
const std::vector<std::string_view>& KnownTags();

// OK when every tag is one of KnownTags() (repeats are allowed). Otherwise InvalidArgument:
//   unknown tag 'foo': valid tags are: inplace_view, pt2_compliant_tag, ...
absl::Status ValidateTags(const std::vector<std::string>& tags);

}  // namespace opreg
