// The out-variant rules (schema_rules.h): automatic out-variant links by PyTorch's name rule,
// explicit links, and synthesized functional schemas. Every error message is asserted in full;
// the ATen corpus is run through the name rule as a whole. The aliasing rule, symmetric-memory
// arguments and tags are tested in test_schema_rules.cc.
#include <catch2/catch.hpp>
#include <map>
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

std::string MatchError(const std::string& functional, const std::string& candidate) {
  return ErrorOf(MatchOutVariant(MustParse(functional), MustParse(candidate)));
}

std::string LinkError(const std::string& functional, const std::string& out_op,
                      const std::vector<std::string>& names) {
  return ErrorOf(ValidateExplicitOutLink(MustParse(functional), MustParse(out_op), names));
}

std::string SynthesisError(const std::string& out) {
  return ErrorOf(SynthesizeFunctionalSchema(MustParse(out)));
}

// ---------------------------------------------------------------------------------------------
// Automatic out-variant links.

TEST_CASE("expected out overload names", "[out_variant]") {
  CHECK(ExpectedOutOverloadName(MustParse("mylib::f(Tensor x) -> Tensor")) == "out");
  CHECK(ExpectedOutOverloadName(
            MustParse("aten::add.Tensor(Tensor self, Tensor other) -> Tensor")) == "Tensor_out");
  CHECK(ExpectedOutOverloadName(MustParse("mylib::f_(Tensor x) -> Tensor")) == std::nullopt);
  CHECK(ExpectedOutOverloadName(MustParse("mylib::f(Tensor(a!) x) -> ()")) == std::nullopt);
}

TEST_CASE("out variant by PyTorch's rule", "[out_variant]") {
  SECTION("single output, returned") {
    absl::StatusOr<OutVariantLink> link =
        MatchOutVariant(MustParse("mylib::rms_norm(Tensor x, Tensor w, float eps=1e-06) -> Tensor"),
                        MustParse("mylib::rms_norm.out(Tensor x, Tensor w, float eps=1e-06, *, "
                                  "Tensor(a!) out) -> Tensor(a!)"));
    REQUIRE(link.ok());
    CHECK(link->functional == OperatorName("mylib::rms_norm", ""));
    CHECK(link->out == OperatorName("mylib::rms_norm", "out"));
    CHECK(link->out_argument_indices == std::vector<size_t>{3});
    CHECK(link->out_argument_names == std::vector<std::string>{"out"});
    CHECK_FALSE(link->explicit_link);
  }
  SECTION("returning () and the Tensor! shorthand are both valid") {
    const FunctionSchema f = MustParse("mylib::add_one(Tensor x) -> Tensor");
    CHECK(MatchOutVariant(f, MustParse("mylib::add_one.out(Tensor x, *, Tensor(a!) out) -> ()"))
              .ok());
    CHECK(MatchOutVariant(f, MustParse("mylib::add_one.out(Tensor x, *, Tensor! out) -> ()")).ok());
  }
  SECTION("multi-output") {
    absl::StatusOr<OutVariantLink> link = MatchOutVariant(
        MustParse("mylib::split_add(Tensor x, Tensor y) -> (Tensor, Tensor)"),
        MustParse("mylib::split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0, Tensor(b!) out1) "
                  "-> (Tensor(a!), Tensor(b!))"));
    REQUIRE(link.ok());
    CHECK(link->out_argument_indices == std::vector<size_t>{2, 3});
    CHECK(link->out_argument_names == std::vector<std::string>{"out0", "out1"});
  }
  SECTION("named overload, named returns, non-out keyword-only arguments") {
    absl::StatusOr<OutVariantLink> link =
        MatchOutVariant(MustParse("mylib::topk.k(Tensor self, SymInt k, *, bool largest=True) -> "
                                  "(Tensor values, Tensor indices)"),
                        MustParse("mylib::topk.k_out(Tensor self, SymInt k, *, bool largest=True, "
                                  "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, "
                                  "Tensor(b!) indices)"));
    REQUIRE(link.ok());
    CHECK(link->out == OperatorName("mylib::topk", "k_out"));
    CHECK(link->out_argument_indices == std::vector<size_t>{3, 4});
  }
  SECTION("ATen pairs from the corpus") {
    absl::StatusOr<OutVariantLink> link =
        MatchOutVariant(AtenOp("aten::multinomial"), AtenOp("aten::multinomial.out"));
    REQUIRE(link.ok());
    CHECK(link->out_argument_names == std::vector<std::string>{"out"});
    link = MatchOutVariant(AtenOp("aten::multilabel_margin_loss_forward"),
                           AtenOp("aten::multilabel_margin_loss_forward.output"));
    CHECK(ErrorOf(link) ==
          "[aten::multilabel_margin_loss_forward.output] is not the out variant of "
          "aten::multilabel_margin_loss_forward by name: expected overload 'out' "
          "(aten::multilabel_margin_loss_forward.out), got 'output' (the rule: 'out' for the "
          "default overload, '<overload>_out' otherwise; link other names explicitly)");
  }
}

TEST_CASE("ATen's own pairings that are not by name are refused", "[out_variant]") {
  // ATen names topk's out overload `values`: found by torchgen's signature grouping, not by name.
  const std::string topk =
      "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
      "(Tensor values, Tensor indices)";
  const std::string topk_values =
      "aten::topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, "
      "*, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)";
  CHECK(MatchError(topk, topk_values) ==
        "[aten::topk.values] is not the out variant of aten::topk by name: expected overload "
        "'out' (aten::topk.out), got 'values' (the rule: 'out' for the default overload, "
        "'<overload>_out' otherwise; link other names explicitly)");
  // The same pair linked explicitly.
  absl::StatusOr<OutVariantLink> link =
      ValidateExplicitOutLink(MustParse(topk), MustParse(topk_values), {"values", "indices"});
  REQUIRE(link.ok());
  CHECK(link->out_argument_indices == std::vector<size_t>{5, 6});
  CHECK(link->explicit_link);

  // torchgen pairs add.Tensor with add.out by signature(); the name rule expects Tensor_out.
  CHECK(MatchError("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                   "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
                   "Tensor(a!)") ==
        "[aten::add.out] is not the out variant of aten::add.Tensor by name: expected overload "
        "'Tensor_out' (aten::add.Tensor_out), got 'out' (the rule: 'out' for the default "
        "overload, '<overload>_out' otherwise; link other names explicitly)");
  CHECK(MatchError(AtenOp("aten::sort.stable").str(), AtenOp("aten::sort.values_stable").str()) ==
        "[aten::sort.values_stable] is not the out variant of aten::sort.stable by name: "
        "expected overload 'stable_out' (aten::sort.stable_out), got 'values_stable' (the rule: "
        "'out' for the default overload, '<overload>_out' otherwise; link other names "
        "explicitly)");
}

TEST_CASE("the name rule over the ATen corpus", "[out_variant][corpus]") {
  std::map<std::string, const FunctionSchema*> by_name;
  for (const FunctionSchema& s : AtenCorpus()) by_name[s.operator_name().str()] = &s;
  int linked = 0;
  int refused = 0;
  for (const FunctionSchema& f : AtenCorpus()) {
    std::optional<std::string> overload = ExpectedOutOverloadName(f);
    if (!overload) continue;
    auto it = by_name.find(OperatorName(f.name(), *overload).str());
    if (it == by_name.end()) continue;
    absl::StatusOr<OutVariantLink> link = MatchOutVariant(f, *it->second);
    if (!link.ok()) {
      ++refused;
      continue;
    }
    ++linked;
    // Every ATen out variant the rule finds gives back its functional op, byte for byte.
    absl::StatusOr<FunctionSchema> synthesized = SynthesizeFunctionalSchema(*it->second);
    REQUIRE(synthesized.ok());
    CHECK(synthesized->str() == f.str());
    CHECK(*synthesized == f);
  }
  // The refusals are the factory ops whose out variants drop TensorOptions (full.out, zeros.out,
  // ...), std/var (different overload sets), all.out and the list-returning unbind_copy.int.
  CHECK(linked == 148);
  CHECK(refused == 14);
  CHECK(ErrorOf(MatchOutVariant(AtenOp("aten::full"), AtenOp("aten::full.out"))) ==
        "[aten::full.out] has 2 non-out arguments but aten::full has 6 arguments: argument "
        "'dtype' (#2) of aten::full, ScalarType? dtype=None, is missing");
}

TEST_CASE("out variant errors: the functional op", "[out_variant]") {
  CHECK(MatchError("ns::f_(Tensor(a!) x) -> Tensor(a!)",
                   "ns::f_.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[ns::f_] is not functional (it mutates 'x'), so it has no out variant");
  CHECK(MatchError("ns::f(Tensor(a!) x, Tensor! y) -> ()",
                   "ns::f.out(Tensor x, *, Tensor(a!) out) -> ()") ==
        "[ns::f] is not functional (it mutates 'x', 'y'), so it has no out variant");
  CHECK(MatchError("ns::f_(Tensor x) -> Tensor", "ns::f_.out(Tensor x, *, Tensor(a!) out) -> ()") ==
        "[ns::f_] is not functional (its name ends in '_', the in-place convention), so it has no "
        "out variant");
  CHECK(MatchError("ns::f(Tensor x) -> ()", "ns::f.out(Tensor x, *, Tensor(a!) out) -> ()") ==
        "[ns::f] returns nothing, so it has no out variant (an out variant's outs stand for the "
        "functional op's returns)");
  CHECK(
      MatchError("ns::f(Tensor x) -> Tensor[]", "ns::f.out(Tensor x, *, Tensor(a!)[] out) -> ()") ==
      "[ns::f] return #0: expected Tensor, got Tensor[] (only Tensor returns can be planned into "
      "out arguments)");
  CHECK(MatchError("ns::f(Tensor x) -> (Tensor, Tensor?)",
                   "ns::f.out(Tensor x, *, Tensor(a!) o) -> ()") ==
        "[ns::f] return #1: expected Tensor, got Tensor? (only Tensor returns can be planned into "
        "out arguments)");
  CHECK(MatchError("ns::f(Tensor(a) x) -> Tensor(a)",
                   "ns::f.out(Tensor x, *, Tensor(b!) out) -> ()") ==
        "[ns::f] return #0 is an alias of an input (Tensor(a)), so it has no out variant");
}

TEST_CASE("out variant errors: names", "[out_variant]") {
  CHECK(MatchError("mylib::f(Tensor x) -> Tensor",
                   "mylib::g.out(Tensor x, *, Tensor(a!) out) -> ()") ==
        "[mylib::g.out] is not an overload of mylib::f: the out variant of mylib::f must be named "
        "mylib::f.out");
  CHECK(MatchError("mylib::f.x(Tensor x) -> Tensor",
                   "mylib::f.out(Tensor x, *, Tensor(a!) out) -> ()") ==
        "[mylib::f.out] is not the out variant of mylib::f.x by name: expected overload 'x_out' "
        "(mylib::f.x_out), got 'out' (the rule: 'out' for the default overload, '<overload>_out' "
        "otherwise; link other names explicitly)");
}

TEST_CASE("out variant errors: arguments", "[out_variant]") {
  const std::string f = "mylib::f(Tensor x, Tensor w, float eps=1e-06) -> Tensor";
  CHECK(MatchError(
            f, "mylib::f.out(Tensor(a!) out, Tensor x, Tensor w, float eps=1e-06) -> Tensor(a!)") ==
        "[mylib::f.out] has no out arguments: an out variant takes its outputs as keyword-only "
        "written Tensors (*, Tensor(a!) out)");
  CHECK(MatchError(
            f,
            "mylib::f.out(Tensor x, Tensor w, float eps=1e-05, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f.out] argument 'eps' (#2): expected float eps=1e-06 as in mylib::f, got float "
        "eps=1e-05");
  CHECK(MatchError(
            f, "mylib::f.out(Tensor x, Tensor w, float eps, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f.out] argument 'eps' (#2): expected float eps=1e-06 as in mylib::f, got float "
        "eps");
  CHECK(MatchError(f,
                   "mylib::f.out(Tensor x, Tensor weight, float eps=1e-06, *, Tensor(a!) out) -> "
                   "Tensor(a!)") ==
        "[mylib::f.out] argument 'weight' (#1): expected Tensor w as in mylib::f, got Tensor "
        "weight");
  CHECK(
      MatchError(
          f,
          "mylib::f.out(Tensor x, Tensor? w, float eps=1e-06, *, Tensor(a!) out) -> Tensor(a!)") ==
      "[mylib::f.out] argument 'w' (#1): expected Tensor w as in mylib::f, got Tensor? w");
  // Real types: SymInt is not int, though both are int64 to a kernel.
  CHECK(MatchError("mylib::g(Tensor x, SymInt k) -> Tensor",
                   "mylib::g.out(Tensor x, int k, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::g.out] argument 'k' (#1): expected SymInt k as in mylib::g, got int k");
  CHECK(MatchError("mylib::g(Tensor x, int[2] k) -> Tensor",
                   "mylib::g.out(Tensor x, int[] k, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::g.out] argument 'k' (#1): expected int[2] k as in mylib::g, got int[] k");
  CHECK(MatchError(
            f,
            "mylib::f.out(Tensor x, Tensor w, *, float eps=1e-06, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f.out] argument 'eps' (#2): expected positional float eps=1e-06 as in mylib::f, "
        "got keyword-only float eps=1e-06");
  CHECK(MatchError(f,
                   "mylib::f.out(Tensor x, Tensor w, float eps=1e-06, int n=0, *, Tensor(a!) out) "
                   "-> Tensor(a!)") ==
        "[mylib::f.out] has 4 non-out arguments but mylib::f has 3 arguments: argument 'n' (#3) "
        "is not an argument of mylib::f");
  CHECK(MatchError(f, "mylib::f.out(Tensor x, Tensor w, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f.out] has 2 non-out arguments but mylib::f has 3 arguments: argument 'eps' (#2) "
        "of mylib::f, float eps=1e-06, is missing");
  CHECK(
      MatchError("mylib::h(Tensor x) -> Tensor", "mylib::h.out(*, Tensor(a!) out) -> Tensor(a!)") ==
      "[mylib::h.out] has 0 non-out arguments but mylib::h has 1 argument: argument 'x' (#0) of "
      "mylib::h, Tensor x, is missing");
  // An out variant that also writes an input cannot stand in for a functional call.
  CHECK(MatchError(f,
                   "mylib::f.out(Tensor(b!) x, Tensor w, float eps=1e-06, *, Tensor(a!) out) -> "
                   "Tensor(a!)") ==
        "[mylib::f.out] argument 'x' (#0): expected Tensor x as in mylib::f, got Tensor(b!) x, "
        "which is written (only the out arguments may be)");
}

TEST_CASE("out variant errors: outs and returns", "[out_variant]") {
  const std::string f = "mylib::f(Tensor x) -> Tensor";
  CHECK(MatchError(f, "mylib::f.out(Tensor x, *, Tensor(a!) out0, Tensor(b!) out1) -> ()") ==
        "[mylib::f.out] has 2 out arguments but mylib::f returns 1 value");
  CHECK(MatchError("mylib::split_add(Tensor x, Tensor y) -> (Tensor, Tensor)",
                   "mylib::split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0) -> Tensor(a!)") ==
        "[mylib::split_add.out] has 1 out argument but mylib::split_add returns 2 values");
  CHECK(MatchError(f, "mylib::f.out(Tensor x, *, Tensor(a!)? out) -> ()") ==
        "[mylib::f.out] out argument 'out' (#1): expected Tensor, got Tensor(a!)? (each out "
        "stands for one Tensor return of mylib::f)");
  CHECK(MatchError("mylib::f(Tensor x) -> (Tensor, Tensor)",
                   "mylib::f.out(Tensor x, *, Tensor(a!) o1, Tensor(a!) o2) -> ()") ==
        "[mylib::f.out] out arguments 'o1' (#1) and 'o2' (#2) share alias set 'a': each out "
        "needs its own set");
  const std::string split_add = "mylib::split_add(Tensor x, Tensor y) -> (Tensor, Tensor)";
  const std::string outs =
      "mylib::split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0, Tensor(b!) out1)";
  CHECK(MatchError(split_add, outs + " -> Tensor(a!)") ==
        "[mylib::split_add.out] returns 1 value but has 2 out arguments: an out variant returns "
        "() or its out arguments in order");
  CHECK(MatchError(split_add, outs + " -> (Tensor(b!), Tensor(a!))") ==
        "[mylib::split_add.out] return #0: expected Tensor(a!) aliasing out argument 'out0' "
        "(#2), got Tensor(b!) (an out variant returns () or its out arguments in order)");
  CHECK(MatchError(split_add, outs + " -> (Tensor(a!), Tensor)") ==
        "[mylib::split_add.out] return #1: expected Tensor(b!) aliasing out argument 'out1' "
        "(#3), got Tensor (an out variant returns () or its out arguments in order)");
  CHECK(MatchError(split_add, outs + " -> (Tensor(a!), Tensor(b))") ==
        "[mylib::split_add.out] return #1: expected Tensor(b!) aliasing out argument 'out1' "
        "(#3), got Tensor(b) (an out variant returns () or its out arguments in order)");
  CHECK(MatchError(f, "mylib::f.out(Tensor x, *, Tensor! out) -> Tensor") ==
        "[mylib::f.out] return #0: out argument 'out' (#1) is a Tensor! (a fresh alias set no "
        "return can name), so the op must return ()");
}

// ---------------------------------------------------------------------------------------------
// Explicit links.

TEST_CASE("explicit links for vLLM-style out ops", "[explicit_link]") {
  SECTION("silu_and_mul") {
    absl::StatusOr<OutVariantLink> link = ValidateExplicitOutLink(
        MustParse("_C::silu_and_mul(Tensor input) -> Tensor"),
        MustParse("_C::silu_and_mul_out(Tensor! result, Tensor input) -> ()"), {"result"});
    REQUIRE(link.ok());
    CHECK(link->functional == OperatorName("_C::silu_and_mul", ""));
    CHECK(link->out == OperatorName("_C::silu_and_mul_out", ""));
    CHECK(link->out_argument_indices == std::vector<size_t>{0});
    CHECK(link->out_argument_names == std::vector<std::string>{"result"});
    CHECK(link->explicit_link);
  }
  SECTION("outs bound in the order named, returned in that order") {
    absl::StatusOr<OutVariantLink> link = ValidateExplicitOutLink(
        MustParse("_C::quant(Tensor input, float scale=1.) -> (Tensor, Tensor)"),
        MustParse("_C::quant_out(Tensor(b!) scales, Tensor(a!) q, Tensor input, float scale=1.) -> "
                  "(Tensor(a!), Tensor(b!))"),
        {"q", "scales"});
    REQUIRE(link.ok());
    CHECK(link->out_argument_indices == std::vector<size_t>{1, 0});
    CHECK(link->out_argument_names == std::vector<std::string>{"q", "scales"});
  }
  SECTION("keyword-only placement is not compared") {
    CHECK(ValidateExplicitOutLink(
              MustParse("_C::f(Tensor input, *, float eps=0.5) -> Tensor"),
              MustParse("_C::f_out(Tensor! out, Tensor input, float eps=0.5) -> ()"), {"out"})
              .ok());
  }
}

TEST_CASE("explicit link errors", "[explicit_link]") {
  const std::string f = "_C::silu_and_mul(Tensor input) -> Tensor";
  CHECK(LinkError("_C::silu_and_mul(Tensor! result, Tensor input) -> ()",
                  "_C::silu_and_mul_out(Tensor! result, Tensor input) -> ()", {"result"}) ==
        "[_C::silu_and_mul] is not functional (it mutates 'result'), so it has no out variant");
  CHECK(LinkError(f, "_C::silu_and_mul(Tensor result, Tensor input) -> ()", {"result"}) ==
        "[_C::silu_and_mul] out argument 'result' (#0): expected a written Tensor (Tensor! or "
        "Tensor(a!)), got Tensor");
  CHECK(LinkError(f, "_C::silu_and_mul_out(Tensor(a!)? result, Tensor input) -> ()", {"result"}) ==
        "[_C::silu_and_mul_out] out argument 'result' (#0): expected a written Tensor (Tensor! or "
        "Tensor(a!)), got Tensor(a!)?");
  CHECK(LinkError(f, "_C::silu_and_mul_out(Tensor! result, Tensor input) -> ()", {"out"}) ==
        "[_C::silu_and_mul_out] out argument 'out': no such argument; valid arguments are: "
        "['result', 'input']");
  CHECK(LinkError(f, "_C::silu_and_mul_out(Tensor! result, Tensor input) -> ()",
                  {"result", "result"}) ==
        "[_C::silu_and_mul_out] out argument 'result' is named twice");
  CHECK(LinkError(f, "_C::silu_and_mul_out(Tensor! result, Tensor input) -> ()", {}) ==
        "[_C::silu_and_mul_out] has 0 out arguments but _C::silu_and_mul returns 1 value");
  CHECK(
      LinkError(f, "_C::silu_and_mul_out(Tensor! a, Tensor! b, Tensor input) -> ()", {"a", "b"}) ==
      "[_C::silu_and_mul_out] has 2 out arguments but _C::silu_and_mul returns 1 value");
  CHECK(LinkError("_C::f(Tensor x, Tensor y) -> (Tensor, Tensor)",
                  "_C::f_out(Tensor(a!) o1, Tensor(a!) o2, Tensor x, Tensor y) -> ()",
                  {"o1", "o2"}) ==
        "[_C::f_out] out arguments 'o1' (#0) and 'o2' (#1) share alias set 'a': each out needs its "
        "own set");
  // Float defaults show as written (Python's repr), not in the 17 digits schemas print.
  CHECK(LinkError("_C::g(Tensor x, float scale=1.) -> Tensor",
                  "_C::g_out(Tensor! out, Tensor x, float scale=0.5) -> ()", {"out"}) ==
        "[_C::g_out] argument 'scale' (#2): expected float scale=1.0 as in _C::g, got float "
        "scale=0.5");
  const std::string rms =
      "_C::rms_norm(Tensor input, Tensor weight, float epsilon=1e-06) -> Tensor";
  CHECK(LinkError(rms,
                  "_C::rms_norm_out(Tensor! result, Tensor weight, Tensor input, float "
                  "epsilon=1e-06) -> ()",
                  {"result"}) ==
        "[_C::rms_norm_out] argument 'weight' (#1): expected Tensor input as in _C::rms_norm, got "
        "Tensor weight");
  CHECK(LinkError(rms,
                  "_C::rms_norm_out(Tensor! result, Tensor input, Tensor weight, float "
                  "epsilon=1e-05) -> ()",
                  {"result"}) ==
        "[_C::rms_norm_out] argument 'epsilon' (#3): expected float epsilon=1e-06 as in "
        "_C::rms_norm, got float epsilon=1e-05");
  CHECK(LinkError(rms, "_C::rms_norm_out(Tensor! result, Tensor input, Tensor weight) -> ()",
                  {"result"}) ==
        "[_C::rms_norm_out] has 2 non-out arguments but _C::rms_norm has 3 arguments: argument "
        "'epsilon' (#2) of _C::rms_norm, float epsilon=1e-06, is missing");
  CHECK(LinkError(rms,
                  "_C::rms_norm_out(Tensor! result, Tensor input, Tensor weight, float "
                  "epsilon=1e-06, bool x=False) -> ()",
                  {"result"}) ==
        "[_C::rms_norm_out] has 4 non-out arguments but _C::rms_norm has 3 arguments: argument "
        "'x' (#4) is not an argument of _C::rms_norm");
  CHECK(LinkError(rms,
                  "_C::rms_norm_out(Tensor! result, Tensor! input, Tensor weight, float "
                  "epsilon=1e-06) -> ()",
                  {"result"}) ==
        "[_C::rms_norm_out] argument 'input' (#1): expected Tensor input as in _C::rms_norm, got "
        "Tensor! input, which is written (only the out arguments may be)");
  CHECK(LinkError(f, "_C::silu_and_mul_out(Tensor! result, Tensor input) -> Tensor", {"result"}) ==
        "[_C::silu_and_mul_out] return #0: out argument 'result' (#0) is a Tensor! (a fresh alias "
        "set no return can name), so the op must return ()");
  CHECK(LinkError(f,
                  "_C::silu_and_mul_out(Tensor(a!) result, Tensor input) -> (Tensor(a!), Tensor)",
                  {"result"}) ==
        "[_C::silu_and_mul_out] returns 2 values but has 1 out argument: an out variant returns () "
        "or its out arguments in order");
}

// ---------------------------------------------------------------------------------------------
// Synthesized functional schemas.

TEST_CASE("synthesized functional schemas link back", "[synthesize]") {
  struct Case {
    std::string out;
    std::string functional;
  };
  for (const Case& c : std::vector<Case>{
           {"mylib::split_add.out(Tensor x, Tensor y, *, Tensor(a!) out0, Tensor(b!) out1) -> "
            "(Tensor(a!), Tensor(b!))",
            "mylib::split_add(Tensor x, Tensor y) -> (Tensor out0, Tensor out1)"},
           {"mylib::rms_norm.out(Tensor x, Tensor w, float eps=1e-06, *, Tensor(a!) out) -> "
            "Tensor(a!)",
            "mylib::rms_norm(Tensor x, Tensor w, float eps=1e-06) -> Tensor"},
           {"mylib::add_one.out(Tensor x, *, Tensor! out) -> ()",
            "mylib::add_one(Tensor x) -> Tensor"},
           {"mylib::topk.values_out(Tensor self, SymInt k, *, bool largest=True, Tensor(a!) "
            "values, "
            "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
            "mylib::topk.values(Tensor self, SymInt k, *, bool largest=True) -> (Tensor values, "
            "Tensor indices)"},
       }) {
    INFO(c.out);
    const FunctionSchema out = MustParse(c.out);
    absl::StatusOr<FunctionSchema> functional = SynthesizeFunctionalSchema(out);
    REQUIRE(functional.ok());
    CHECK(functional->str() == MustParse(c.functional).str());
    CHECK(*functional == MustParse(c.functional));
    absl::StatusOr<OutVariantLink> link = MatchOutVariant(*functional, out);
    REQUIRE(link.ok());
    CHECK(link->out == out.operator_name());
    CHECK(CheckAliasingRule(*functional).ok());
  }
}

TEST_CASE("synthesis errors", "[synthesize]") {
  CHECK(SynthesisError("aten::topk.values(Tensor self, SymInt k, *, Tensor(a!) values, Tensor(b!) "
                       "indices) -> (Tensor(a!) values, Tensor(b!) indices)") ==
        "[aten::topk.values] cannot synthesize a functional op: the overload name must be 'out' or "
        "'<overload>_out', got 'values'");
  CHECK(SynthesisError("mylib::f(Tensor x, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f] cannot synthesize a functional op: the overload name must be 'out' or "
        "'<overload>_out', got ''");
  CHECK(SynthesisError("mylib::f._out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f._out] cannot synthesize a functional op: the overload name must be 'out' or "
        "'<overload>_out', got '_out'");
  CHECK(SynthesisError("mylib::f.out(Tensor x, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f.out] cannot synthesize a functional op: it has no out arguments (keyword-only "
        "written Tensors: *, Tensor(a!) out)");
  CHECK(SynthesisError("mylib::f.out(Tensor x, *, Tensor(a!)[] out) -> ()") ==
        "[mylib::f.out] cannot synthesize a functional op: out argument 'out' (#1) is a "
        "Tensor(a!)[]: only Tensor outs can become returns");
  CHECK(SynthesisError("mylib::f.out(Tensor x, *, Tensor(a!)? out) -> ()") ==
        "[mylib::f.out] cannot synthesize a functional op: out argument 'out' (#1) is a "
        "Tensor(a!)?: only Tensor outs can become returns");
  CHECK(SynthesisError("mylib::f.out(Tensor(b!) x, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f.out] cannot synthesize a functional op: the result mylib::f(Tensor(b!) x) -> "
        "Tensor would not link back: [mylib::f] is not functional (it mutates 'x'), so it has no "
        "out variant");
  CHECK(SynthesisError("mylib::f_.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)") ==
        "[mylib::f_.out] cannot synthesize a functional op: the result mylib::f_(Tensor x) -> "
        "Tensor would not link back: [mylib::f_] is not functional (its name ends in '_', the "
        "in-place convention), so it has no out variant");
  CHECK(
      SynthesisError(
          "mylib::f.out(Tensor x, *, Tensor(a!) o1, Tensor(b!) o2) -> (Tensor(b!), Tensor(a!))") ==
      "[mylib::f.out] cannot synthesize a functional op: the result mylib::f(Tensor x) -> "
      "(Tensor o1, Tensor o2) would not link back: [mylib::f.out] return #0: expected "
      "Tensor(a!) aliasing out argument 'o1' (#1), got Tensor(b!) (an out variant returns () or "
      "its out arguments in order)");
}

}  // namespace
}  // namespace opreg
