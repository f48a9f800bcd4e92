// Malformed schemas: each gives its exact message at its exact column, and the status carries
// the location and an excerpt with a caret.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "schema_test_util.h"

namespace opreg {
namespace {

using testing::ErrorOf;

struct BadSchema {
  std::string text;
  std::string message;
  int column;
};

const std::vector<BadSchema>& BadSchemas() {
  static const std::vector<BadSchema> cases = {
      // Structure.
      {"", "expected an operator name but found end of input", 1},
      {"f", "Tried to parse a function schema but only the operator name was given", 2},
      {"1f(Tensor x) -> ()", "expected an operator name but found '1'", 1},
      {"ns:f(Tensor x) -> ()", "expected ':' but found 'f'", 4},
      {"f(Tensor x", "expected ',' or ')' in argument list but found end of input", 11},
      {"f(Tensor x,) -> Tensor", "trailing comma in argument list: expected an element after ','",
       12},
      {"f(Tensor x) Tensor", "expected '->' but found 'Tensor'", 13},
      {"f(Tensor x) -> ", "expected a type but found end of input", 16},
      {"f(Tensor x) -> Tensor y z", "expected end of schema but found 'z'", 25},
      {"f(Tensor x, Tensor y) -> (Tensor a, Tensor b",
       "expected ',' or ')' in return list but found end of input", 45},
      {"f(Tensor x) -> (Tensor,)", "trailing comma in return list: expected an element after ','",
       24},
      {"f(Tensor x) -> ()  $", "unexpected character '$'", 20},
      {"f(Tensor x) -> ()\x01", "unexpected byte 0x01", 18},
      // PyTorch's own printing of the `!` shorthand does not parse, here or there.
      {"f(Tensor($0! -> ) x) -> ()", "unexpected character '$'", 10},
      // Markers.
      {"f(Tensor x, ..., int y) -> Tensor", "... must be the last element of the argument list",
       18},
      {"f(Tensor x) -> (Tensor, ..., Tensor)", "... must be the last element of the return list",
       30},
      {"f(*, *, Tensor x) -> ()", "'*' may appear only once in an argument list", 6},
      {"f(Tensor x, int y=1, ...) -> Tensor",
       "schemas with vararg (...) can't have default value args", 13},
      {"f(int x=1, int y) -> Tensor",
       "Non-default positional argument follows default argument (parameter 'y')", 12},
      // Names.
      {"f(Tensor if) -> Tensor", "'if' is a keyword and cannot be used as an argument name", 10},
      {"f(Tensor None) -> Tensor", "'None' is a keyword and cannot be used as an argument name",
       10},
      {"import(Tensor x) -> ()", "'import' is a keyword and cannot be used as an operator name", 1},
      {"f.default(Tensor x) -> Tensor", "default is not a legal overload name for aten operators",
       3},
      {"f.__call(Tensor x) -> Tensor", "__call is not a legal overload name for aten operators", 3},
      {"f(Tensor) -> Tensor", "expected an argument name but found ')'", 9},
      // Types.
      {"f(Foo x) -> Tensor",
       "unknown type specifier 'Foo'. Common valid schema types include Tensor, SymInt, int, "
       "float, bool, Scalar",
       3},
      {"f(t x) -> Tensor",
       "unknown type specifier 't'. Common valid schema types include Tensor, SymInt, int, "
       "float, bool, Scalar",
       3},
      {"f(double x) -> Tensor",
       "Use `float` instead of `double` in an operator's schema string. `float` in schema "
       "corresponds to the double type in C++",
       3},
      {"f(int64_t x) -> Tensor",
       "Use `SymInt` or `int` instead of `int64_t` in an operator's schema string. `SymInt` "
       "corresponds to c10::SymInt in C++ while `int` in schema corresponds to the int64_t type "
       "in C++.",
       3},
      {"f(Dict(str) x) -> ()", "expected ',' but found ')'", 11},
      {"f(Future x) -> ()", "expected '(' but found 'x'", 10},
      {"f(int[x] y) -> ()", "expected a list size (a non-negative integer) or ']' but found 'x'",
       7},
      {"f(int[5000] y=1) -> ()", "list size 5000 is too large (at most 4096)", 7},
      {"f(int[2.5] y) -> ()",
       "expected a list size (a non-negative integer) or ']' but found '2.5'", 7},
      {"f(Tensor x) -> Tensor[",
       "expected a list size (a non-negative integer) or ']' but found end of input", 23},
      {"f(Tensor" +
           [] {
             std::string s;
             for (int i = 0; i < 34; ++i) s += "[]";
             return s;
           }() +
           " x) -> ()",
       "type is nested too deeply", 73},
      // Alias annotations.
      {"f(Tensor?(a!) x) -> ()",
       "an alias annotation must come before '?': write Tensor(a!)?, not Tensor?(a!)", 10},
      {"f(Tensor(a x) -> ()", "expected ')' but found 'x'", 12},
      {"f(Tensor(a -> ) x) -> ()", "expected an alias set name but found ')'", 15},
      {"f(Tensor(a!!) x) -> ()", "expected ')' but found '!'", 12},
      {"f(Tensor() x) -> ()", "expected an alias set name but found ')'", 10},
      {"f(Tensor x) -> Tensor(a", "expected ')' but found end of input", 24},
      // Defaults.
      {"f(int x=) -> ()", "expected a default value but found ')'", 9},
      {"f(int x=-) -> ()", "expected a number after '-' but found ')'", 10},
      {"f(int x=\"a) -> ()", "unterminated string literal", 9},
      {"f(float x=inf) -> ()", "invalid numeric default value 'inf'", 11},
      {"f(int x=bfloat16) -> ()", "invalid numeric default value 'bfloat16'", 9},
      {"f(ScalarType dtype=nosuch) -> ()", "invalid numeric default value 'nosuch'", 20},
      {"f(Tensor x=1) -> ()", "the default of a Tensor argument can only be None", 12},
      {"f(Generator g=0) -> ()", "the default of a Generator argument can only be None", 15},
      {"f(int[] x=None) -> ()",
       "the default of a int[] argument must be a list such as [] or [1, 2]; None needs an "
       "optional list type such as int[]?",
       11},
      {"f(int[]? x=[1]) -> ()",
       "the default of an optional list argument (int[]?) can only be None", 12},
      {"f(float[] x=[True]) -> ()", "list default: expected float elements but found True", 13},
      {"f(int[] x=[1.5]) -> ()", "list default: expected int elements but found 1.5", 11},
      {"f(int[] x=[1,]) -> ()", "expected a default value but found ']'", 14},
      {"f(str[] x=[\"a\"]) -> ()", "lists are only supported for float, int and complex types", 11},
      {"f(int x=99999999999999999999) -> ()",
       "integer default value 99999999999999999999 is out of range", 9},
      {"f(float x=1e999) -> ()", "floating-point default value 1e999 is out of range", 11},
      {"f(str x=\"\\x41\") -> ()", "unsupported hex specifier", 10},
      {"f(str x=\"\\u0041\") -> ()", "unsupported unicode specifier", 10},
      {"f(str x=\"\\9\") -> ()", "ill formed octal specifier", 10},
      {"f((int, int) t=None) -> ()",
       "default values are not supported for arguments of type (int, int)", 16},
      {"f(Device d=3) -> ()", "expected a device string such as \"cuda:0\" but found '3'", 12},
  };
  return cases;
}

TEST_CASE("malformed schemas give exact messages at exact columns", "[schema][errors]") {
  REQUIRE(BadSchemas().size() >= 40);
  for (const BadSchema& bad : BadSchemas()) {
    SchemaParseError e = ErrorOf(bad.text);
    INFO("schema: " << bad.text);
    CHECK(e.message == bad.message);
    CHECK(e.column == bad.column);
    CHECK(e.line == 1);
  }
}

TEST_CASE("errors report the line and show an excerpt with a caret", "[schema][errors]") {
  const std::string text = "mylib::f(Tensor x,\n         Foo y) -> ()";
  absl::StatusOr<FunctionSchema> s = ParseSchema(text);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
  SchemaParseError e = ErrorOf(text);
  CHECK(e.line == 2);
  CHECK(e.column == 10);
  const std::string message(s.status().message());
  CHECK(absl::StartsWith(message, "unknown type specifier 'Foo'."));
  CHECK(absl::StrContains(message,
                          "(line 2, column 10)\n           Foo y) -> ()\n"
                          "           ^"));
}

TEST_CASE("long lines are cut around the error", "[schema][errors]") {
  std::string text = "f(";
  for (int i = 0; i < 40; ++i) text += "Tensor a" + std::to_string(i) + ", ";
  text += "Foo y) -> ()";
  absl::StatusOr<FunctionSchema> s = ParseSchema(text);
  REQUIRE_FALSE(s.ok());
  const std::string message(s.status().message());
  CHECK(absl::StrContains(message, "\n  ...Tensor"));
  // The caret sits under `Foo` in the cut line.
  const size_t line_start = message.find("\n  ...") + 1;
  const size_t caret_line = message.find('\n', line_start) + 1;
  const size_t caret_col = message.find('^', caret_line) - caret_line;
  CHECK(message.substr(line_start + caret_col, 3) == "Foo");
}

TEST_CASE("other statuses carry no parse location", "[schema][errors]") {
  CHECK_FALSE(GetSchemaParseError(absl::InvalidArgumentError("x")).has_value());
  CHECK_FALSE(GetSchemaParseError(absl::OkStatus()).has_value());
}

}  // namespace
}  // namespace opreg
