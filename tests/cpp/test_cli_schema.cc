// `opreg schema`: line-by-line canonicalization, error lines, namespaces.
#include <catch2/catch.hpp>
#include <sstream>

#include "schema_command.h"

namespace opreg::cli {
namespace {

TEST_CASE("opreg schema canonicalizes each line in order", "[cli]") {
  std::istringstream in(
      "add(Tensor x, Scalar alpha=1.0) -> Tensor\n"
      "f(Foo x) -> ()\n"
      "\n"
      "mylib::g(str s='a') -> ()\r\n");
  std::ostringstream out;
  SchemaCommandOptions options;
  options.default_namespace = "mylib";
  CHECK(CanonicalizeSchemas(in, out, options) == 1);
  CHECK(out.str() ==
        "mylib::add(Tensor x, Scalar alpha=1.) -> Tensor\n"
        "error: col 3: unknown type specifier 'Foo'. Common valid schema types include Tensor, "
        "SymInt, int, float, bool, Scalar\n"
        "\n"
        "mylib::g(str s=\"a\") -> ()\n");
}

TEST_CASE("opreg schema leaves names alone without --namespace", "[cli]") {
  std::istringstream in("f(Tensor! x) -> ()\n");
  std::ostringstream out;
  CHECK(CanonicalizeSchemas(in, out, {}) == 0);
  CHECK(out.str() == "f(Tensor! x) -> ()\n");
}

TEST_CASE("opreg schema rejects unknown options and missing files", "[cli]") {
  CHECK(RunSchemaCommand({"--bogus"}) == 2);
  CHECK(RunSchemaCommand({"--namespace"}) == 2);
  CHECK(RunSchemaCommand({"/nonexistent/file.txt"}) == 2);
  CHECK(RunSchemaCommand({"/tmp"}) == 2);  // a directory is not an empty input
}

}  // namespace
}  // namespace opreg::cli
