#include "opreg/schema/out_variant.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "opreg/core/string_util.h"
#include "opreg/schema/type.h"
#include "rule_messages.h"

namespace opreg {
namespace {

using rules_internal::ArgRef;
using rules_internal::ArgText;
using rules_internal::ArgumentNames;
using rules_internal::Count;
using rules_internal::OpLabel;
using rules_internal::PyList;
using rules_internal::TypeText;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

bool IsPlainTensor(const Type& t) { return t.kind() == TypeKind::kTensor; }

bool NameEndsInUnderscore(const FunctionSchema& s) {
  return absl::EndsWith(ToAbsl(s.operator_name().base_name()), "_");
}

// A written argument's annotation as a set of names, for comparing a return's annotation with
// its out's regardless of the order the sets were written in.
bool SameSets(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  return std::all_of(a.begin(), a.end(), [&](const std::string& s) {
    return std::find(b.begin(), b.end(), s) != b.end();
  });
}

// "keyword-only float eps=1e-06" when keyword-only-ness is what differs (Argument::str() does
// not show it), otherwise the argument as printed.
std::string Describe(const Argument& a, bool show_kwarg_only) {
  if (!show_kwarg_only) return ArgText(a);
  return StrCat(a.kwarg_only() ? "keyword-only " : "positional ", ArgText(a));
}

// Step 1 of both link rules: only a functional op, whose returns are plain Tensors that are not
// views, has an out variant whose outs the dispatcher can allocate one per return.
absl::Status CheckFunctionalForOut(const FunctionSchema& f) {
  const std::vector<std::string> mutated = f.MutatedArgumentNames();
  if (!mutated.empty()) {
    std::string names;
    for (const std::string& n : mutated) StrAppend(&names, names.empty() ? "" : ", ", "'", n, "'");
    return Invalid(StrCat(OpLabel(f), " is not functional (it mutates ", names,
                          "), so it has no out variant"));
  }
  if (NameEndsInUnderscore(f)) {
    return Invalid(StrCat(OpLabel(f),
                          " is not functional (its name ends in '_', the in-place convention), so "
                          "it has no out variant"));
  }
  if (f.returns().empty()) {
    return Invalid(StrCat(OpLabel(f),
                          " returns nothing, so it has no out variant (an out variant's outs stand "
                          "for the functional op's returns)"));
  }
  for (size_t r = 0; r < f.returns().size(); ++r) {
    const Argument& ret = f.returns()[r];
    if (!IsPlainTensor(*ret.type())) {
      return Invalid(StrCat(OpLabel(f), " return #", r, ": expected Tensor, got ",
                            ret.type()->str(),
                            " (only Tensor returns can be planned into out arguments)"));
    }
    if (ret.alias_info()) {
      return Invalid(StrCat(OpLabel(f), " return #", r, " is an alias of an input (", TypeText(ret),
                            "), so it has no out variant"));
    }
  }
  return absl::OkStatus();
}

// Compares one non-out argument of the out op (`got`, at `got_index`) with the functional's
// argument `want`: name, real type, list size, default and (for the automatic rule)
// keyword-only-ness. Types are compared as printed, PyTorch's `str(arg.type)`.
absl::Status CompareArgument(const FunctionSchema& out_op, const Argument& got, size_t got_index,
                             const FunctionSchema& functional, const Argument& want,
                             bool compare_kwarg_only) {
  const bool kwarg_differs = compare_kwarg_only && got.kwarg_only() != want.kwarg_only();
  const bool same = got.name() == want.name() && got.type()->str() == want.type()->str() &&
                    got.N() == want.N() && got.default_value() == want.default_value() &&
                    !kwarg_differs;
  if (!same) {
    return Invalid(StrCat(OpLabel(out_op), " argument ", ArgRef(got, got_index), ": expected ",
                          Describe(want, kwarg_differs), " as in ",
                          functional.operator_name().str(), ", got ",
                          Describe(got, kwarg_differs)));
  }
  if (got.is_write()) {
    // A functional call must leave its inputs alone; an out op that also writes one of them
    // cannot stand in for it.
    return Invalid(StrCat(OpLabel(out_op), " argument ", ArgRef(got, got_index), ": expected ",
                          ArgText(want), " as in ", functional.operator_name().str(), ", got ",
                          ArgText(got), ", which is written (only the out arguments may be)"));
  }
  return absl::OkStatus();
}

// Compares the out op's non-out arguments (indices `inputs`, in schema order) with the
// functional's arguments, pairwise and then by count.
absl::Status CompareInputs(const FunctionSchema& functional, const FunctionSchema& out_op,
                           const std::vector<size_t>& inputs, bool compare_kwarg_only) {
  const std::vector<Argument>& want = functional.arguments();
  const size_t common = std::min(want.size(), inputs.size());
  for (size_t k = 0; k < common; ++k) {
    absl::Status st = CompareArgument(out_op, out_op.arguments()[inputs[k]], inputs[k], functional,
                                      want[k], compare_kwarg_only);
    if (!st.ok()) return st;
  }
  if (inputs.size() == want.size()) return absl::OkStatus();
  std::string head =
      StrCat(OpLabel(out_op), " has ", Count(inputs.size(), "non-out argument"), " but ",
             functional.operator_name().str(), " has ", Count(want.size(), "argument"), ": ");
  if (inputs.size() > want.size()) {
    const size_t extra = inputs[want.size()];
    return Invalid(StrCat(head, "argument ", ArgRef(out_op.arguments()[extra], extra),
                          " is not an argument of ", functional.operator_name().str()));
  }
  const Argument& missing = want[inputs.size()];
  return Invalid(StrCat(head, "argument ", ArgRef(missing, inputs.size()), " of ",
                        functional.operator_name().str(), ", ", ArgText(missing), ", is missing"));
}

// The outs (indices in `out_op`, bound to returns in order) are plain Tensors, one per
// functional return, and no two may share an alias set: each gets its own buffer.
absl::Status CheckOuts(const FunctionSchema& functional, const FunctionSchema& out_op,
                       const std::vector<size_t>& outs) {
  if (outs.size() != functional.returns().size()) {
    return Invalid(StrCat(OpLabel(out_op), " has ", Count(outs.size(), "out argument"), " but ",
                          functional.operator_name().str(), " returns ",
                          Count(functional.returns().size(), "value")));
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const Argument& a = out_op.arguments()[outs[k]];
    if (!IsPlainTensor(*a.type())) {
      return Invalid(StrCat(OpLabel(out_op), " out argument ", ArgRef(a, outs[k]),
                            ": expected Tensor, got ", TypeText(a),
                            " (each out stands for one Tensor return of ",
                            functional.operator_name().str(), ")"));
    }
    for (size_t j = 0; j < k; ++j) {
      const Argument& b = out_op.arguments()[outs[j]];
      for (const std::string& set : a.alias_info()->before_sets()) {
        const std::vector<std::string>& other = b.alias_info()->before_sets();
        if (set == AliasInfo::kWildcard ||
            std::find(other.begin(), other.end(), set) == other.end()) {
          continue;
        }
        return Invalid(StrCat(OpLabel(out_op), " out arguments ", ArgRef(b, outs[j]), " and ",
                              ArgRef(a, outs[k]), " share alias set '", set,
                              "': each out needs its own set"));
      }
    }
  }
  return absl::OkStatus();
}

// The out op returns `()` or its outs in order, each return annotated like its out.
absl::Status CheckOutReturns(const FunctionSchema& out_op, const std::vector<size_t>& outs) {
  const std::vector<Argument>& rets = out_op.returns();
  if (rets.empty()) return absl::OkStatus();
  if (rets.size() != outs.size()) {
    return Invalid(StrCat(OpLabel(out_op), " returns ", Count(rets.size(), "value"), " but has ",
                          Count(outs.size(), "out argument"),
                          ": an out variant returns () or its out arguments in order"));
  }
  for (size_t r = 0; r < rets.size(); ++r) {
    const Argument& ret = rets[r];
    const Argument& out = out_op.arguments()[outs[r]];
    const AliasInfo& out_alias = *out.alias_info();
    if (out_alias.IsFreshShorthand()) {
      return Invalid(StrCat(OpLabel(out_op), " return #", r, ": out argument ",
                            ArgRef(out, outs[r]),
                            " is a Tensor! (a fresh alias set no return can name), so the op "
                            "must return ()"));
    }
    const bool matches = IsPlainTensor(*ret.type()) && ret.alias_info() &&
                         ret.alias_info()->is_write() &&
                         SameSets(ret.alias_info()->before_sets(), out_alias.before_sets());
    if (!matches) {
      return Invalid(StrCat(OpLabel(out_op), " return #", r, ": expected Tensor", out_alias.str(),
                            " aliasing out argument ", ArgRef(out, outs[r]), ", got ",
                            TypeText(ret),
                            " (an out variant returns () or its out arguments in order)"));
    }
  }
  return absl::OkStatus();
}

OutVariantLink MakeLink(const FunctionSchema& functional, const FunctionSchema& out_op,
                        std::vector<size_t> outs, bool explicit_link) {
  OutVariantLink link;
  link.functional = functional.operator_name();
  link.out = out_op.operator_name();
  for (size_t i : outs) link.out_argument_names.push_back(out_op.arguments()[i].name());
  link.out_argument_indices = std::move(outs);
  link.explicit_link = explicit_link;
  return link;
}

}  // namespace

std::optional<std::string> ExpectedOutOverloadName(const FunctionSchema& functional) {
  if (functional.is_mutable() || NameEndsInUnderscore(functional)) return std::nullopt;
  if (functional.overload_name().empty()) return std::string("out");
  return StrCat(functional.overload_name(), "_out");
}

absl::StatusOr<OutVariantLink> MatchOutVariant(const FunctionSchema& functional,
                                               const FunctionSchema& candidate) {
  if (absl::Status st = CheckFunctionalForOut(functional); !st.ok()) return st;

  const std::string expected_overload = *ExpectedOutOverloadName(functional);
  const OperatorName expected_name(functional.name(), expected_overload);
  if (candidate.name() != functional.name()) {
    return Invalid(StrCat(OpLabel(candidate), " is not an overload of ", functional.name(),
                          ": the out variant of ", functional.operator_name().str(),
                          " must be named ", expected_name.str()));
  }
  if (candidate.overload_name() != expected_overload) {
    return Invalid(StrCat(
        OpLabel(candidate), " is not the out variant of ", functional.operator_name().str(),
        " by name: expected overload '", expected_overload, "' (", expected_name.str(), "), got '",
        candidate.overload_name(),
        "' (the rule: 'out' for the default overload, '<overload>_out' otherwise; link other "
        "names explicitly)"));
  }

  std::vector<size_t> outs;
  std::vector<size_t> inputs;
  for (size_t i = 0; i < candidate.arguments().size(); ++i) {
    (candidate.arguments()[i].is_out() ? outs : inputs).push_back(i);
  }
  if (outs.empty()) {
    return Invalid(StrCat(OpLabel(candidate),
                          " has no out arguments: an out variant takes its outputs as "
                          "keyword-only written Tensors (*, Tensor(a!) out)"));
  }
  if (absl::Status st = CompareInputs(functional, candidate, inputs, /*compare_kwarg_only=*/true);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckOuts(functional, candidate, outs); !st.ok()) return st;
  if (absl::Status st = CheckOutReturns(candidate, outs); !st.ok()) return st;
  return MakeLink(functional, candidate, std::move(outs), /*explicit_link=*/false);
}

absl::StatusOr<OutVariantLink> ValidateExplicitOutLink(
    const FunctionSchema& functional, const FunctionSchema& out_op,
    const std::vector<std::string>& out_arg_names, bool meta_only_arguments) {
  if (absl::Status st = CheckFunctionalForOut(functional); !st.ok()) return st;

  std::vector<size_t> outs;
  for (size_t k = 0; k < out_arg_names.size(); ++k) {
    const std::string& name = out_arg_names[k];
    if (std::find(out_arg_names.begin(), out_arg_names.begin() + k, name) !=
        out_arg_names.begin() + k) {
      return Invalid(StrCat(OpLabel(out_op), " out argument '", name, "' is named twice"));
    }
    const std::optional<size_t> index = out_op.ArgumentIndex(name);
    if (!index) {
      return Invalid(
          StrCat(OpLabel(out_op), " out argument '", name,
                 "': no such argument; valid arguments are: ", PyList(ArgumentNames(out_op))));
    }
    const Argument& a = out_op.arguments()[*index];
    if (!IsPlainTensor(*a.type()) || !a.is_write()) {
      return Invalid(StrCat(OpLabel(out_op), " out argument ", ArgRef(a, *index),
                            ": expected a written Tensor (Tensor! or Tensor(a!)), got ",
                            TypeText(a)));
    }
    outs.push_back(*index);
  }
  if (absl::Status st = CheckOuts(functional, out_op, outs); !st.ok()) return st;

  std::vector<size_t> inputs;
  for (size_t i = 0; i < out_op.arguments().size(); ++i) {
    if (std::find(outs.begin(), outs.end(), i) == outs.end()) inputs.push_back(i);
  }
  std::vector<size_t> sources;
  if (meta_only_arguments) {
    // By name: every input of the out op comes from the functional argument of its name.
    for (size_t i : inputs) {
      const Argument& a = out_op.arguments()[i];
      const std::optional<size_t> j = functional.ArgumentIndex(a.name());
      if (!j) {
        return Invalid(StrCat(OpLabel(out_op), " argument ", ArgRef(a, i), " is not an argument of ",
                              functional.operator_name().str(),
                              " (its inputs are passed by name)"));
      }
      if (absl::Status st = CompareArgument(out_op, a, i, functional, functional.arguments()[*j],
                                            /*compare_kwarg_only=*/false);
          !st.ok()) {
        return st;
      }
      sources.push_back(*j);
    }
  } else if (absl::Status st =
                 CompareInputs(functional, out_op, inputs, /*compare_kwarg_only=*/false);
             !st.ok()) {
    // The link passes the functional's arguments by position, so `*` placement does not matter.
    return st;
  }
  if (absl::Status st = CheckOutReturns(out_op, outs); !st.ok()) return st;
  OutVariantLink link = MakeLink(functional, out_op, std::move(outs), /*explicit_link=*/true);
  link.input_sources = std::move(sources);
  return link;
}

absl::StatusOr<FunctionSchema> SynthesizeFunctionalSchema(const FunctionSchema& out_schema) {
  const std::string head = StrCat(OpLabel(out_schema), " cannot synthesize a functional op: ");
  const std::string& overload = out_schema.overload_name();
  std::string functional_overload;
  if (overload == "out") {
    functional_overload = "";
  } else if (overload.size() > 4 && absl::EndsWith(overload, "_out")) {
    functional_overload = overload.substr(0, overload.size() - 4);
  } else {
    return Invalid(
        StrCat(head, "the overload name must be 'out' or '<overload>_out', got '", overload, "'"));
  }

  std::vector<Argument> arguments;
  std::vector<size_t> outs;
  for (size_t i = 0; i < out_schema.arguments().size(); ++i) {
    const Argument& a = out_schema.arguments()[i];
    if (!a.is_out()) {
      arguments.push_back(a);
      continue;
    }
    if (!IsPlainTensor(*a.type())) {
      return Invalid(StrCat(head, "out argument ", ArgRef(a, i), " is a ", TypeText(a),
                            ": only Tensor outs can become returns"));
    }
    outs.push_back(i);
  }
  if (outs.empty()) {
    return Invalid(
        StrCat(head, "it has no out arguments (keyword-only written Tensors: *, Tensor(a!) out)"));
  }

  // One out reads best as `-> Tensor`; several keep their names, as ATen's multi-output ops do
  // (`-> (Tensor values, Tensor indices)`).
  std::vector<Argument> returns;
  for (size_t i : outs) {
    std::string name = outs.size() == 1 ? "" : out_schema.arguments()[i].name();
    returns.emplace_back(std::move(name), Type::Get(TypeKind::kTensor), std::nullopt, std::nullopt,
                         /*kwarg_only=*/false, std::nullopt);
  }
  FunctionSchema functional(OperatorName(out_schema.name(), functional_overload),
                            std::move(arguments), std::move(returns), out_schema.is_vararg(),
                            out_schema.is_varret());
  // The dispatcher will link the two by MatchOutVariant; a functional op that does not link
  // back (a written input, a return list that is not the outs) would be a dead end.
  absl::StatusOr<OutVariantLink> link = MatchOutVariant(functional, out_schema);
  if (!link.ok()) {
    return Invalid(StrCat(head, "the result ", functional.str(),
                          " would not link back: ", link.status().message()));
  }
  return functional;
}

}  // namespace opreg
