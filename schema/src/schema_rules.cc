#include "opreg/schema/schema_rules.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "opreg/core/string_util.h"
#include "rule_messages.h"

namespace opreg {
namespace {

using rules_internal::ArgRef;
using rules_internal::OpLabel;

// Collects the alias sets of an annotation and of its contained (list element) annotations:
// `Tensor(a)[]` returns alias through their elements, so both levels count. The wildcard is
// left out: `*` means "may alias anything", not a named set a mutation can be traced through.
void CollectSets(const AliasInfo& info, std::vector<std::string>* sets) {
  for (const std::string& s : info.before_sets()) {
    if (s != AliasInfo::kWildcard) sets->push_back(s);
  }
  for (const AliasInfo& c : info.contained()) CollectSets(c, sets);
}

std::vector<std::string> SetsOf(const Argument& a) {
  std::vector<std::string> sets;
  if (a.alias_info()) CollectSets(*a.alias_info(), &sets);
  return sets;
}

bool Intersects(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& s) {
    return std::find(b.begin(), b.end(), s) != b.end();
  });
}

// Static storage for KnownTags(): string literals, so the views never dangle.
const std::vector<std::string_view>& TagTable() {
  static const auto* const kTags = new std::vector<std::string_view>{
      "inplace_view",
      "pt2_compliant_tag",
      "view_copy",
      "dynamic_output_shape",
      "data_dependent_output",
      "generated",
      "nondeterministic_seeded",
      "nondeterministic_bitwise",
      "needs_fixed_stride_order",
      "flexible_layout",
      "core",
      "pointwise",
      "maybe_aliasing_or_mutating",
      "out_variant",
      "needs_contiguous_strides",
  };
  return *kTags;
}

}  // namespace

absl::Status CheckAliasingRule(const FunctionSchema& schema) {
  // The in-place convention (`add_`) returns its mutated self on purpose; torchgen checks that
  // form separately, and every such op of the ATen corpus must keep passing here.
  if (absl::EndsWith(ToAbsl(schema.operator_name().base_name()), "_")) return absl::OkStatus();
  // The `*_out` naming convention (PyTorch's symm_mem ops:
  // `one_shot_all_reduce_out(Tensor input, ..., Tensor(a!) out) -> Tensor(a!)`) marks out
  // variants whose outs are positional; like keyword-only outs, they may be returned.
  // Only for that positional convention: an op with keyword-only outs returns those.
  const bool positional_outs =
      (absl::EndsWith(ToAbsl(schema.operator_name().base_name()), "_out") ||
       schema.overload_name() == "out" || absl::EndsWith(schema.overload_name(), "_out")) &&
      std::none_of(schema.arguments().begin(), schema.arguments().end(),
                   [](const Argument& a) { return a.is_out(); });

  const std::vector<Argument>& args = schema.arguments();
  for (size_t r = 0; r < schema.returns().size(); ++r) {
    const std::vector<std::string> return_sets = SetsOf(schema.returns()[r]);
    if (return_sets.empty()) continue;
    for (size_t i = 0; i < args.size(); ++i) {
      const Argument& a = args[i];
      // Returning an out argument is what out variants do; only mutated inputs are refused.
      if (!a.is_write() || a.is_out() || positional_outs) continue;
      if (!Intersects(return_sets, SetsOf(a))) continue;
      return absl::InvalidArgumentError(
          StrCat(OpLabel(schema), " return #", r, " aliases mutated argument ", ArgRef(a, i),
                 ": an op that mutates its inputs must not return them; return () instead. The "
                 "exceptions: in-place ops, named with a trailing '_' (add_), which return "
                 "their mutated self, and out variants, which return their outs (keyword-only "
                 "Tensor(a!) outs, or, in an op or overload named *_out or out that has no "
                 "keyword-only outs, positional ones)"));
    }
  }
  return absl::OkStatus();
}

const std::vector<std::string_view>& KnownTags() { return TagTable(); }

absl::Status ValidateTags(const std::vector<std::string>& tags) {
  const std::vector<std::string_view>& known = TagTable();
  for (const std::string& tag : tags) {
    if (std::find(known.begin(), known.end(), tag) != known.end()) continue;
    std::string valid;
    for (std::string_view k : known) StrAppend(&valid, valid.empty() ? "" : ", ", k);
    return absl::InvalidArgumentError(StrCat("unknown tag '", tag, "': valid tags are: ", valid));
  }
  return absl::OkStatus();
}

}  // namespace opreg
