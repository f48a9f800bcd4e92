// Symmetric-memory argument lists (`register_symm_mem_args(op, {names})`): which tensor
// arguments of an op the runtime allocates from (or requires in) a group's symmetric heap.
// Included by schema_rules.h; see that header for the error conventions.
//
// Thread safety: all functions are reentrant.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "opreg/schema/function_schema.h"

namespace opreg {

// What a registration asks of its arguments. kRequired: a caller's tensor that is not
// symmetric is an error naming op and argument. kAccepted: symmetric tensors are used as they
// are and the runtime realizes the others (PyTorch's registry has this meaning only).
enum class SymmMemRequirement { kRequired, kAccepted };

struct SymmMemArgsValidation {
  // The schema index of each name, in the order the names were given.
  std::vector<size_t> argument_indices;
  // Non-fatal findings, to be logged by the registry.
  std::vector<std::string> warnings;
};

// Validates `names` as the symmetric-memory arguments of `schema`. Errors (InvalidArgument), in
// this order, the first two in PyTorch's wording:
//   Cannot register empty arg_names list for mylib::f
//   Invalid argument names for mylib::f: ['nope']. Valid arguments are: ['input', 'group_name']
//   [mylib::f] argument 'input' (#0) is listed twice as a symmetric-memory argument
//   [mylib::f] argument 'n' (#1): symmetric-memory arguments must be Tensor, Tensor? or
//   Tensor[], got int
// Warning (the registration stands): the schema has no `str group_name` argument, which
// PyTorch's Inductor reads to pick the group whose heap it allocates from:
//   mylib::f has no 'str group_name' argument: the runtime cannot tell which group's symmetric
//   heap to allocate from
absl::StatusOr<SymmMemArgsValidation> ValidateSymmMemArgs(const FunctionSchema& schema,
                                                          const std::vector<std::string>& names);

}  // namespace opreg
