// Out-variant links: which op computes a functional op's results into preallocated outputs.
// Included by schema_rules.h; see that header for the error conventions.
//
//  - MatchOutVariant: PyTorch's automatic rule (`torch/_library/_out_variant.py` with torchgen's
//    overload naming): `mylib::f(Tensor x) -> Tensor` and
//    `mylib::f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)`.
//  - ValidateExplicitOutLink: a link the library states (`m.link_out_variant(...)`), for
//    vLLM-style ops whose outs are positional `Tensor!` arguments of another op.
//  - SynthesizeFunctionalSchema: the functional schema implied by an out variant.
//
// Thread safety: all functions are reentrant.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "opreg/schema/function_schema.h"
#include "opreg/schema/operator_name.h"

namespace opreg {

// A validated functional -> out link. Calling `functional` through it means: allocate one
// Tensor per return, pass them as out_argument_indices[i] (return i -> out argument i), pass
// the functional's arguments as the out op's other arguments in order, return the outs.
struct OutVariantLink {
  OperatorName functional;  // e.g. mylib::topk
  OperatorName out;         // e.g. mylib::topk.out, _C::silu_and_mul_out
  // Indices in the out schema's arguments, bound to the functional's returns in order.
  std::vector<size_t> out_argument_indices;
  std::vector<std::string> out_argument_names;
  // For each non-out argument of the out op, in order, the index of the functional argument
  // passed to it. Empty: by position (the functional's arguments are exactly the out op's
  // inputs). Set when the functional has arguments only its meta function uses.
  std::vector<size_t> input_sources;
  bool explicit_link = false;  // true when made by ValidateExplicitOutLink
};

// The overload name PyTorch's rule expects for the out variant of `functional`: `out` for the
// default overload, `<overload>_out` otherwise (torchgen's
// get_expected_out_variant_overload_name). nullopt when `functional` is not functional (its
// name ends in `_` or it writes an argument), since such an op has no out variant.
std::optional<std::string> ExpectedOutOverloadName(const FunctionSchema& functional);

// PyTorch's rule for "`candidate` is the out variant of `functional`", checked in this order,
// each violation with its own message:
//  1. `functional` is functional: no written argument
//       [mylib::f_] is not functional (it mutates 'x'), so it has no out variant
//     and a name not ending in `_`; it returns at least one value, every return is a plain
//     `Tensor` (not a list or optional: each return becomes one planned buffer) and none is an
//     alias of an input (a view has no out variant).
//  2. Same `ns::name`, and the candidate's overload is ExpectedOutOverloadName(functional).
//     Only the name is used: ATen's `topk.values` (outs named `values`, `indices`) is not found
//     for `topk`, and torchgen's pairing of `add.Tensor` with `add.out` (grouping by
//     signature(), not by overload name) is not made; link those explicitly.
//  3. The candidate has at least one out argument (`Argument::is_out()`: keyword-only + written).
//  4. The candidate's other arguments equal the functional's pairwise, by name, real type
//     (`type()->str()`, list size), default value and keyword-only-ness, and are not written:
//       [mylib::f.out] argument 'eps' (#2): expected float eps=1e-06 as in mylib::f, got float
//       eps=1e-05
//     and the counts agree.
//  5. One out argument per functional return
//       [mylib::f.out] has 2 out arguments but mylib::f returns 1 value
//     each a plain Tensor, no two sharing an alias set.
//  6. The candidate returns `()` or exactly its outs in order: return i is a Tensor whose alias
//     annotation is out i's (`Tensor(a!)`); a `Tensor!` out can only be returned as `()`.
// Argument indices in messages are indices in the schema named in brackets. Stricter than
// PyTorch in step 4 (PyTorch ignores alias annotations, so it would accept an out variant that
// also writes an input) and in steps 5-6 (PyTorch does not check the out types or returns).
absl::StatusOr<OutVariantLink> MatchOutVariant(const FunctionSchema& functional,
                                               const FunctionSchema& candidate);

// An explicit link from `functional` to `out_op` whose outputs are the arguments named
// `out_arg_names`, bound to the functional's returns in that order (vLLM:
// `_C::silu_and_mul(Tensor input) -> Tensor` with
// `_C::silu_and_mul_out(Tensor! result, Tensor input) -> ()` and {"result"}). `out_op` may have
// any name. Checked in this order:
//  1. `functional` is functional, as for MatchOutVariant.
//  2. Each name is unique, is an argument of `out_op`, and that argument is a written plain
//     Tensor (`Tensor!`, `Tensor(a!)`, positional or keyword-only):
//       [_C::silu_and_mul] out argument 'result' (#0): expected a written Tensor (Tensor! or
//       Tensor(a!)), got Tensor
//  3. As many names as the functional has returns; no two outs sharing an alias set.
//  4. `out_op`'s other arguments equal the functional's, in order, by name, real type and
//     default (keyword-only-ness is not compared: the link calls by position), none written.
//  5. `out_op` returns `()` or its outs in the order named.
// The result has explicit_link = true.
// With `meta_only_arguments`, rule 4 matches by name instead: each other argument of `out_op`
// must be a functional argument of the same name, type and default, in any position; the
// functional's remaining arguments are only for its meta function (the `k` of a top-k whose
// out op reads k from its output's shape), and the link records input_sources.
absl::StatusOr<OutVariantLink> ValidateExplicitOutLink(
    const FunctionSchema& functional, const FunctionSchema& out_op,
    const std::vector<std::string>& out_arg_names, bool meta_only_arguments = false);

// The functional op implied by an out variant: from
//   ns::f.out(args..., *, Tensor(a!) o1, Tensor(b!) o2) -> (...)
// builds
//   ns::f(args...) -> (Tensor o1, Tensor o2)
// The overload `out` becomes the default overload and `<x>_out` becomes `<x>`; the arguments
// other than the outs are kept as they are (names, types, defaults, `*`). Returns are plain
// Tensors: a single one unnamed (`-> Tensor`, as torchgen writes single returns), several named
// after their outs (`-> (Tensor values, Tensor indices)`, as ATen names multi-output returns).
// Refused with InvalidArgument, `[ns::f.out] cannot synthesize a functional op: ...`, when the
// overload is neither `out` nor `<x>_out`, there is no out argument, an out is not a plain
// Tensor (`Tensor(a!)[]`, `Tensor(a!)?`), or the result does not link back through
// MatchOutVariant(result, out_schema) (the message then carries MatchOutVariant's).
absl::StatusOr<FunctionSchema> SynthesizeFunctionalSchema(const FunctionSchema& out_schema);

}  // namespace opreg
