// The parsed model: names, types (real and fake), alias annotations, defaults, markers.
#include <catch2/catch.hpp>

#include "schema_test_util.h"

namespace opreg {
namespace {

using testing::MustParse;

TEST_CASE("names, namespaces and overloads", "[schema][parser]") {
  FunctionSchema s = MustParse("mylib::rms_norm.out(Tensor x) -> Tensor");
  CHECK(s.name() == "mylib::rms_norm");
  CHECK(s.overload_name() == "out");
  CHECK(s.operator_name().ns() == "mylib");
  CHECK(s.operator_name().base_name() == "rms_norm");
  CHECK(s.operator_name().str() == "mylib::rms_norm.out");

  FunctionSchema bare = MustParse("add(Tensor x) -> Tensor");
  CHECK(bare.operator_name().ns().empty());
  bare.SetNamespaceIfNotSet("mylib");
  CHECK(bare.str() == "mylib::add(Tensor x) -> Tensor");
  bare.SetNamespaceIfNotSet("other");
  CHECK(bare.name() == "mylib::add");

  // Overload names may be type names or start with a type name.
  CHECK(MustParse("aten::add.Tensor(Tensor x) -> Tensor").overload_name() == "Tensor");
  CHECK(MustParse("f.int(int x) -> int").overload_name() == "int");
  // `from` is no keyword: it names arguments in ATen.
  CHECK(MustParse("f(float from=0, float to=1) -> ()").arguments()[0].name() == "from");
}

TEST_CASE("a bare operator name parses as a name", "[schema][parser]") {
  auto parsed = ParseSchemaOrName("mylib::op.overload");
  REQUIRE(parsed.ok());
  REQUIRE(std::holds_alternative<OperatorName>(*parsed));
  CHECK(std::get<OperatorName>(*parsed).str() == "mylib::op.overload");
  auto schema = ParseSchemaOrName("mylib::op(Tensor x) -> ()");
  REQUIRE(schema.ok());
  CHECK(std::holds_alternative<FunctionSchema>(*schema));
}

TEST_CASE("real and fake types", "[schema][parser]") {
  FunctionSchema s = MustParse(
      "f(SymInt n, ScalarType t, Layout l, MemoryFormat m, SymInt[] sizes, ScalarType? d, "
      "Tensor x, int[2] k, Tensor?[] idx, int[]? o) -> ()");
  const auto& a = s.arguments();
  CHECK(a[0].type()->kind() == TypeKind::kSymInt);
  CHECK(a[0].fake_type()->kind() == TypeKind::kInt);
  CHECK(a[1].fake_type()->kind() == TypeKind::kInt);
  CHECK(a[2].fake_type()->kind() == TypeKind::kInt);
  CHECK(a[3].fake_type()->kind() == TypeKind::kInt);
  CHECK(a[4].type()->str() == "SymInt[]");
  CHECK(a[4].fake_type()->str() == "int[]");
  CHECK(a[5].fake_type()->str() == "int?");
  CHECK(a[6].fake_type() == a[6].type());  // unchanged types are shared, not copied
  CHECK(a[7].type()->str() == "int[]");
  CHECK(a[7].N() == 2);
  CHECK(a[8].type()->kind() == TypeKind::kList);
  CHECK(a[8].type()->element()->kind() == TypeKind::kOptional);
  CHECK(a[9].type()->kind() == TypeKind::kOptional);
  CHECK(a[9].type()->element()->kind() == TypeKind::kList);
  CHECK(IsTensorLike(*a[6].type()));
  CHECK(IsTensorLike(*a[8].type()));
  CHECK_FALSE(IsTensorLike(*a[7].type()));
}

TEST_CASE("custom classes and type variables", "[schema][parser]") {
  FunctionSchema s =
      MustParse("f(__torch__.torch.classes.c10d.ProcessGroup pg, mylib.Handle h) -> ()");
  CHECK(s.arguments()[0].type()->kind() == TypeKind::kClass);
  CHECK(s.arguments()[0].type()->name() == "__torch__.torch.classes.c10d.ProcessGroup");
  CHECK(s.arguments()[1].type()->name() == "mylib.Handle");
  // Type variables only in aten:: and prim:: schemas (or when asked for).
  FunctionSchema t = MustParse("aten::list(t[] l) -> t[]");
  CHECK(t.arguments()[0].type()->element()->kind() == TypeKind::kVar);
  CHECK_FALSE(ParseSchema("mylib::list(t[] l) -> t[]").ok());
  SchemaParseOptions allow;
  allow.allow_typevars = true;
  CHECK(ParseSchema("mylib::list(t[] l) -> t[]", allow).ok());
}

TEST_CASE("alias annotations", "[schema][parser]") {
  FunctionSchema s = MustParse(
      "f(Tensor(a) v, Tensor(b!) w, Tensor(c -> *) s, Tensor(d! -> d|e) m, Tensor(*) any, "
      "Tensor x) -> Tensor(a)");
  const auto& a = s.arguments();
  CHECK(a[0].alias_info()->before_sets() == std::vector<std::string>{"a"});
  CHECK(a[0].alias_info()->after_sets() == std::vector<std::string>{"a"});
  CHECK_FALSE(a[0].is_write());
  CHECK(a[1].is_write());
  CHECK(a[2].alias_info()->after_sets() == std::vector<std::string>{"*"});
  CHECK(a[2].alias_info()->IsWildcardAfter());
  CHECK(a[3].alias_info()->after_sets() == std::vector<std::string>{"d", "e"});
  CHECK(a[4].alias_info()->IsWildcardBefore());
  CHECK_FALSE(a[5].alias_info().has_value());
  CHECK(s.returns()[0].alias_info()->before_sets() == std::vector<std::string>{"a"});
  CHECK(s.is_mutable());
  CHECK(s.MutatedArgumentNames() == std::vector<std::string>{"w", "m"});
  // Names after a wildcard are ignored, as in PyTorch.
  CHECK(MustParse("f(Tensor(*|a) x) -> ()").arguments()[0].alias_info()->before_sets() ==
        std::vector<std::string>{"*"});
}

TEST_CASE("element and container annotations of lists", "[schema][parser]") {
  FunctionSchema s =
      MustParse("f(Tensor(a!)[] outs, Tensor[](b!) handles, Tensor(c)[] views) -> ()");
  const AliasInfo& outs = *s.arguments()[0].alias_info();
  CHECK(outs.before_sets().empty());
  CHECK(outs.is_write());  // a list of written elements is written
  REQUIRE(outs.contained().size() == 1);
  CHECK(outs.contained()[0].before_sets() == std::vector<std::string>{"a"});
  const AliasInfo& handles = *s.arguments()[1].alias_info();
  CHECK(handles.before_sets() == std::vector<std::string>{"b"});
  CHECK(handles.contained().empty());
  CHECK_FALSE(s.arguments()[2].is_write());
  CHECK(s.MutatedArgumentNames() == std::vector<std::string>{"outs", "handles"});
}

TEST_CASE("the ! shorthand makes a fresh written set per use", "[schema][parser]") {
  FunctionSchema s = MustParse("f(Tensor! a, Tensor!? b, int!? c, Tensor x) -> ()");
  const auto& a = s.arguments();
  CHECK(a[0].alias_info()->before_sets() == std::vector<std::string>{"$0"});
  CHECK(a[0].alias_info()->after_sets().empty());
  CHECK(a[0].alias_info()->IsFreshShorthand());
  CHECK(a[1].alias_info()->before_sets() == std::vector<std::string>{"$1"});
  CHECK(a[1].type()->kind() == TypeKind::kOptional);
  CHECK(a[2].alias_info()->before_sets() == std::vector<std::string>{"$2"});
  CHECK(a[2].type()->element()->kind() == TypeKind::kInt);
  CHECK(s.MutatedArgumentNames() == std::vector<std::string>{"a", "b", "c"});
  // Fresh sets are anonymous: equal whatever their numbers (annotations inside Future(...) are
  // dropped, as in PyTorch, yet still take a number).
  FunctionSchema dropped = MustParse("aten::f(Future(t!) x, Tensor! y) -> ()");
  FunctionSchema reparsed = MustParse(dropped.str());
  CHECK(dropped.str() == "aten::f(Future(t) x, Tensor! y) -> ()");
  CHECK(dropped == reparsed);
  // Positional `Tensor!` arguments are written but are not out arguments.
  CHECK_FALSE(a[0].is_out());
}

TEST_CASE("out arguments are keyword-only and written", "[schema][parser]") {
  FunctionSchema s = MustParse(
      "topk.values(Tensor self, int k, *, Tensor(a!) values, Tensor(b!) indices) -> "
      "(Tensor(a!) values, Tensor(b!) indices)");
  CHECK_FALSE(s.arguments()[0].is_out());
  CHECK_FALSE(s.arguments()[1].kwarg_only());
  CHECK(s.arguments()[2].kwarg_only());
  CHECK(s.arguments()[2].is_out());
  CHECK(s.arguments()[3].is_out());
  CHECK(s.returns()[1].name() == "indices");
  CHECK_FALSE(s.returns()[0].kwarg_only());
  CHECK(s.ArgumentIndex("indices") == 3u);
  CHECK_FALSE(s.ArgumentIndex("nope").has_value());
  CHECK(s.ReturnedArgumentIndex(0) == 2u);
  CHECK(s.ReturnedArgumentIndex(1) == 3u);
  CHECK_FALSE(s.ReturnedArgumentIndex(2).has_value());
  FunctionSchema inplace = MustParse("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  CHECK(inplace.ReturnedArgumentIndex(0) == 0u);
  FunctionSchema view = MustParse("view(Tensor(a) self, int[] size) -> Tensor(a)");
  CHECK_FALSE(view.ReturnedArgumentIndex(0).has_value());  // an alias, not a written argument
}

TEST_CASE("default values", "[schema][parser]") {
  FunctionSchema s = MustParse(
      "f(Tensor? w=None, int k=-3, float eps=1e-06, bool b=True, str mode='sum', "
      "int[2] stride=1, float[] f=[1, 2.5], ScalarType dt=bfloat16, Device dev=\"cuda:1\", "
      "str? s=None, Scalar a=1.0) -> ()");
  const auto& a = s.arguments();
  CHECK(a[0].default_value()->isNone());
  CHECK(a[1].default_value()->toInt() == -3);
  CHECK(a[2].default_value()->toDouble() == 1e-06);
  CHECK(a[3].default_value()->toBool());
  CHECK(a[4].default_value()->toStringRef() == "sum");
  CHECK(a[5].default_value()->toIntList() == std::vector<int64_t>{1, 1});
  CHECK(a[6].default_value()->toDoubleList() == std::vector<double>{1.0, 2.5});
  CHECK(a[7].default_value()->toInt() == 15);
  CHECK(a[8].default_value()->toDevice() == Device::cuda(1));
  CHECK(a[9].default_value()->isNone());
  CHECK(a[10].default_value()->toDouble() == 1.0);
  // Defaults are not required after keyword-only or list arguments.
  CHECK(ParseSchema("f(int a=1, *, int b) -> ()").ok());
  CHECK(ParseSchema("f(int a=1, int[] b) -> ()").ok());
}

TEST_CASE("whitespace and newlines are insignificant", "[schema][parser]") {
  FunctionSchema s = MustParse(
      "  mylib :: f . out (\n  Tensor  x ,\n\t*,\n  Tensor(a!)\nout\n)\n->\n"
      "Tensor(a!)\n");
  CHECK(s.str() == "mylib::f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
}

TEST_CASE("duplicate argument names are accepted, as in PyTorch", "[schema][parser]") {
  FunctionSchema s = MustParse("f(Tensor q_seqlens, Tensor q_seqlens) -> ()");
  CHECK(s.arguments().size() == 2);
  CHECK(s.ArgumentIndex("q_seqlens") == 0u);
}

TEST_CASE("varargs and varrets", "[schema][parser]") {
  FunctionSchema s = MustParse("f(Tensor x, ...) -> (Tensor, ...)");
  CHECK(s.is_vararg());
  CHECK(s.is_varret());
  CHECK(s.returns().size() == 1);
  FunctionSchema e = MustParse("f(...) -> ...");
  CHECK(e.arguments().empty());
  CHECK(e.returns().empty());
  CHECK(e.is_varret());
}

}  // namespace
}  // namespace opreg
