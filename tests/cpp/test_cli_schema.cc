// `opreg schema`: line-by-line canonicalization, error lines, namespaces.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>
#include <string>

#include "cli_test_util.h"
#include "plan_command.h"
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

TEST_CASE("the CLI refuses FIFOs and devices instead of blocking or reading without end",
          "[cli]") {
  // A FIFO with no writer blocked open() forever; /dev/zero was read until memory ran out.
  char dir[] = "/tmp/opreg_cli_fifo_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string fifo = std::string(dir) + "/f";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    std::string out, err;
    CHECK(testing::RunCaptured(RunSchemaCommand, {path}, &out, &err) == 2);
    CHECK(err == "opreg schema: cannot read " + path +
                     ": is not a regular file (a FIFO, device or socket); pipe such input to "
                     "stdin\n");
    CHECK(testing::RunCaptured(RunPlanCommand, {path}, &out, &err) == 2);
    CHECK_THAT(err, Catch::Contains("is not a regular file"));
  }
  ::unlink(fifo.c_str());
  ::rmdir(dir);
}

TEST_CASE("opreg schema --namespace must be an identifier", "[cli]") {
  std::string out, err;
  CHECK(testing::RunCaptured(RunSchemaCommand, {"--namespace", "a::b\n(", "/dev/null"}, &out,
                             &err) == 2);
  CHECK_THAT(err, Catch::Contains("--namespace must be an identifier"));
  CHECK(out.empty());
}

}  // namespace
}  // namespace opreg::cli
