#include "opreg/schema/symm_mem_args.h"

#include <algorithm>

#include "opreg/core/string_util.h"
#include "opreg/schema/type.h"
#include "rule_messages.h"

namespace opreg {
namespace {

using rules_internal::ArgRef;
using rules_internal::ArgumentNames;
using rules_internal::OpLabel;
using rules_internal::PyList;

// The types the runtime can realize in a symmetric heap: one tensor, maybe absent, or a list of
// them. `Tensor?[]` is left out, as PyTorch's Inductor realizes only these three.
bool IsSymmMemType(const Type& t) {
  switch (t.kind()) {
    case TypeKind::kTensor:
      return true;
    case TypeKind::kOptional:
    case TypeKind::kList:
      return t.element()->kind() == TypeKind::kTensor;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<SymmMemArgsValidation> ValidateSymmMemArgs(const FunctionSchema& schema,
                                                          const std::vector<std::string>& names) {
  const std::string op = schema.operator_name().str();
  // The first two messages keep PyTorch's wording (SymmMemArgsHolder.register), so users who
  // search for them find the same explanations.
  if (names.empty()) {
    return absl::InvalidArgumentError(StrCat("Cannot register empty arg_names list for ", op));
  }
  std::vector<std::string> invalid;
  for (const std::string& n : names) {
    if (!schema.ArgumentIndex(n)) invalid.push_back(n);
  }
  if (!invalid.empty()) {
    return absl::InvalidArgumentError(
        StrCat("Invalid argument names for ", op, ": ", PyList(invalid),
               ". Valid arguments are: ", PyList(ArgumentNames(schema))));
  }

  SymmMemArgsValidation result;
  for (size_t k = 0; k < names.size(); ++k) {
    const size_t index = *schema.ArgumentIndex(names[k]);
    const Argument& a = schema.arguments()[index];
    if (std::find(names.begin(), names.begin() + k, names[k]) != names.begin() + k) {
      return absl::InvalidArgumentError(StrCat(OpLabel(schema), " argument ", ArgRef(a, index),
                                               " is listed twice as a symmetric-memory argument"));
    }
    if (!IsSymmMemType(*a.type())) {
      return absl::InvalidArgumentError(
          StrCat(OpLabel(schema), " argument ", ArgRef(a, index),
                 ": symmetric-memory arguments must be Tensor, Tensor? or Tensor[], got ",
                 a.type()->str()));
    }
    result.argument_indices.push_back(index);
  }

  const std::optional<size_t> group = schema.ArgumentIndex("group_name");
  if (!group || schema.arguments()[*group].type()->kind() != TypeKind::kStr) {
    result.warnings.push_back(StrCat(op,
                                     " has no 'str group_name' argument: the runtime cannot tell "
                                     "which group's symmetric heap to allocate from"));
  }
  return result;
}

}  // namespace opreg
