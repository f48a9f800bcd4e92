// The schema rules (schema_rules.h) other than out-variant linking: the aliasing rule,
// symmetric-memory argument lists and tags. Every error message is asserted in full; the ATen
// corpus is run through the aliasing rule as a whole. Out-variant links and synthesized
// functional schemas are tested in test_schema_out_variant_rules.cc.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "opreg/schema/schema_rules.h"
#include "schema_rules_test_util.h"
#include "schema_test_util.h"

namespace opreg {
namespace {

using testing::MustParse;
using testing::schema_rules::AtenCorpus;
using testing::schema_rules::AtenOp;
using testing::schema_rules::ErrorOf;

std::string SymmError(const std::string& schema, const std::vector<std::string>& names) {
  return ErrorOf(ValidateSymmMemArgs(MustParse(schema), names));
}

// ---------------------------------------------------------------------------------------------
// The aliasing rule.

const std::string kReturnedMutation =
    "an op that mutates its inputs must not return them; return () instead. The exceptions: "
    "in-place ops, named with a trailing '_' (add_), which return their mutated self, and out "
    "variants, which return their outs (keyword-only Tensor(a!) outs, or, in an op or overload "
    "named *_out or out that has no keyword-only outs, positional ones)";

TEST_CASE("aliasing rule refuses returning a mutated input", "[aliasing]") {
  CHECK(ErrorOf(CheckAliasingRule(MustParse("mylib::f(Tensor(a!) x) -> Tensor(a!)"))) ==
        "[mylib::f] return #0 aliases mutated argument 'x' (#0): " + kReturnedMutation);
  // A read-only annotation on the return aliases the mutated set all the same.
  CHECK(ErrorOf(
            CheckAliasingRule(MustParse("mylib::g.Tensor(Tensor x, Tensor(a!) y) -> Tensor(a)"))) ==
        "[mylib::g.Tensor] return #0 aliases mutated argument 'y' (#1): " + kReturnedMutation);
  // The second return; the first is fresh.
  CHECK(ErrorOf(CheckAliasingRule(
            MustParse("mylib::h(Tensor x, Tensor(b!) y) -> (Tensor, Tensor(b!))"))) ==
        "[mylib::h] return #1 aliases mutated argument 'y' (#1): " + kReturnedMutation);
  // Through list elements.
  CHECK(ErrorOf(CheckAliasingRule(MustParse("mylib::k(Tensor(a!)[] xs) -> Tensor(a)[]"))) ==
        "[mylib::k] return #0 aliases mutated argument 'xs' (#0): " + kReturnedMutation);
  // A positional written argument is not an out, even in an op named like an out variant.
  CHECK(ErrorOf(CheckAliasingRule(MustParse(
            "mylib::f.out(Tensor(a!) x, *, Tensor(b!) out) -> (Tensor(b!), Tensor(a!))"))) ==
        "[mylib::f.out] return #1 aliases mutated argument 'x' (#0): " + kReturnedMutation);
  // Without the in-place `_`, ATen's add_ form is refused.
  CHECK_FALSE(
      CheckAliasingRule(MustParse("mylib::add_into(Tensor(a!) self, Tensor other) -> Tensor(a!)"))
          .ok());
}

TEST_CASE("aliasing rule accepts out variants, in-place ops, views and fresh sets", "[aliasing]") {
  for (const char* text : {
           "mylib::f(Tensor(a!) x) -> ()",
           "mylib::f(Tensor! x, Tensor y) -> ()",
           "mylib::f(Tensor! x, Tensor y) -> Tensor",
           "mylib::f(Tensor(a!) x, Tensor y) -> Tensor",
           "mylib::f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",
           "mylib::f.out(Tensor x, *, Tensor! out) -> ()",
           "mylib::split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0, Tensor(b!) out1) -> "
           "(Tensor(a!), Tensor(b!))",
           "mylib::view(Tensor(a) x) -> Tensor(a)",
           "mylib::split(Tensor(a -> *) self, int n) -> Tensor(a)[]",
           "mylib::f_(Tensor(a!) x) -> Tensor(a!)",
           "mylib::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
           "mylib::g(Tensor x) -> Tensor(*)",
       }) {
    INFO(text);
    CHECK(CheckAliasingRule(MustParse(text)).ok());
  }
}

TEST_CASE("aliasing rule passes every line of the ATen corpus", "[aliasing][corpus]") {
  REQUIRE(AtenCorpus().size() >= 1500);
  int failures = 0;
  int inplace_returning_self = 0;
  for (const FunctionSchema& s : AtenCorpus()) {
    absl::Status st = CheckAliasingRule(s);
    if (!st.ok()) {
      ++failures;
      UNSCOPED_INFO(st.message());
    }
    const std::string_view base = s.operator_name().base_name();
    if (base.back() == '_' && !s.returns().empty() && s.returns()[0].alias_info() &&
        s.returns()[0].alias_info()->is_write()) {
      ++inplace_returning_self;
    }
  }
  CHECK(failures == 0);
  // The in-place exception is what lets these through.
  CHECK(inplace_returning_self > 50);
  CHECK(CheckAliasingRule(AtenOp("aten::add_.Scalar")).ok());
}

// ---------------------------------------------------------------------------------------------
// Symmetric-memory arguments.

TEST_CASE("symmetric-memory argument lists", "[symm_mem]") {
  const std::string all_reduce =
      "symm_mem::one_shot_all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor";
  absl::StatusOr<SymmMemArgsValidation> v = ValidateSymmMemArgs(MustParse(all_reduce), {"input"});
  REQUIRE(v.ok());
  CHECK(v->argument_indices == std::vector<size_t>{0});
  CHECK(v->warnings.empty());

  v = ValidateSymmMemArgs(
      MustParse("symm_mem::one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, "
                "Tensor(a!) out) -> Tensor(a!)"),
      {"out", "input"});
  REQUIRE(v.ok());
  CHECK(v->argument_indices == std::vector<size_t>{3, 0});
  CHECK(v->warnings.empty());

  v = ValidateSymmMemArgs(MustParse("mylib::f(Tensor? a, Tensor[] b, Tensor(a!) c) -> ()"),
                          {"a", "b", "c"});
  REQUIRE(v.ok());
  CHECK(v->argument_indices == std::vector<size_t>{0, 1, 2});
  CHECK(v->warnings == std::vector<std::string>{
                           "mylib::f has no 'str group_name' argument: the runtime cannot tell "
                           "which group's symmetric heap to allocate from"});

  v = ValidateSymmMemArgs(MustParse("mylib::g.x(Tensor input, int group_name) -> Tensor"),
                          {"input"});
  REQUIRE(v.ok());
  CHECK(v->warnings == std::vector<std::string>{
                           "mylib::g.x has no 'str group_name' argument: the runtime cannot tell "
                           "which group's symmetric heap to allocate from"});
}

TEST_CASE("symmetric-memory argument errors", "[symm_mem]") {
  const std::string f = "mylib::f(Tensor input, str group_name) -> Tensor";
  CHECK(SymmError(f, {}) == "Cannot register empty arg_names list for mylib::f");
  CHECK(SymmError(f, {"nope"}) ==
        "Invalid argument names for mylib::f: ['nope']. Valid arguments are: ['input', "
        "'group_name']");
  CHECK(SymmError(f, {"a", "input", "b"}) ==
        "Invalid argument names for mylib::f: ['a', 'b']. Valid arguments are: ['input', "
        "'group_name']");
  CHECK(SymmError(f, {"input", "input"}) ==
        "[mylib::f] argument 'input' (#0) is listed twice as a symmetric-memory argument");
  CHECK(SymmError("mylib::f(Tensor input, int n, str group_name) -> Tensor", {"input", "n"}) ==
        "[mylib::f] argument 'n' (#1): symmetric-memory arguments must be Tensor, Tensor? or "
        "Tensor[], got int");
  CHECK(SymmError(f, {"group_name"}) ==
        "[mylib::f] argument 'group_name' (#1): symmetric-memory arguments must be Tensor, "
        "Tensor? or Tensor[], got str");
  CHECK(SymmError("mylib::f(Tensor?[] xs, str group_name) -> ()", {"xs"}) ==
        "[mylib::f] argument 'xs' (#0): symmetric-memory arguments must be Tensor, Tensor? or "
        "Tensor[], got Tensor?[]");
  CHECK(SymmError("mylib::f(Tensor[]? xs, str group_name) -> ()", {"xs"}) ==
        "[mylib::f] argument 'xs' (#0): symmetric-memory arguments must be Tensor, Tensor? or "
        "Tensor[], got Tensor[]?");
}

// ---------------------------------------------------------------------------------------------
// Tags.

TEST_CASE("tags", "[tags]") {
  const std::vector<std::string_view> expected = {"inplace_view",
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
                                                  "needs_contiguous_strides"};
  CHECK(KnownTags() == expected);
  CHECK(ValidateTags({}).ok());
  CHECK(ValidateTags({"pt2_compliant_tag", "needs_fixed_stride_order", "core"}).ok());
  CHECK(ValidateTags({"out_variant", "needs_contiguous_strides", "core", "core"}).ok());
  CHECK(ErrorOf(ValidateTags({"core", "Core"})) ==
        "unknown tag 'Core': valid tags are: inplace_view, pt2_compliant_tag, view_copy, "
        "dynamic_output_shape, data_dependent_output, generated, nondeterministic_seeded, "
        "nondeterministic_bitwise, needs_fixed_stride_order, flexible_layout, core, pointwise, "
        "maybe_aliasing_or_mutating, out_variant, needs_contiguous_strides");
}

TEST_CASE("ops named *_out may return their positional outs", "[aliasing]") {
  auto s = ParseSchema(
      "symm_mem::one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, "
      "Tensor(a!) out) -> Tensor(a!)");
  REQUIRE(s.ok());
  CHECK(CheckAliasingRule(*s).ok());
  auto f = ParseSchema("mylib::f(Tensor input, Tensor(a!) out) -> Tensor(a!)");
  REQUIRE(f.ok());
  CHECK_FALSE(CheckAliasingRule(*f).ok());
}

}  // namespace
}  // namespace opreg
