// `opreg ops`: loading a kernel library with dlopen, listing and dumping its ops.
#include <catch2/catch.hpp>
#include <iostream>
#include <sstream>

#include "cli_test_util.h"
#include "ops_command.h"

namespace opreg::cli {
namespace {

int Run(const std::vector<std::string>& args, std::string* out, std::string* err) {
  return testing::RunCaptured(RunOpsCommand, args, out, err);
}

TEST_CASE("opreg ops loads a library and lists and dumps its ops", "[cli]") {
  std::string out, err;
  REQUIRE(Run({"--load", OPREG_TEST_PLUGIN, "--schemas"}, &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("plugin::identity(Tensor x) -> Tensor\n"));
  CHECK_THAT(out, Catch::Contains("plugin::identity.out(Tensor x, *, Tensor(a!) out) -> "
                                  "Tensor(a!)\n"));
  REQUIRE(Run({"plugin::identity"}, &out, &err) == 0);
  CHECK_THAT(out, Catch::StartsWith("plugin::identity(Tensor x) -> Tensor\n  defined at "));
  CHECK_THAT(out, Catch::Contains("ops_plugin.cc:"));
  CHECK_THAT(out, Catch::Contains("    CPU: registered at "));
  CHECK_THAT(out, Catch::Contains("out variant: plugin::identity.out (outs: out; linked by name)"));
  REQUIRE(Run({}, &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("plugin::identity\n"));
}

TEST_CASE("opreg ops loads a stable-ABI library that links no runtime", "[cli]") {
  std::string out, err;
  REQUIRE(Run({"--load", OPREG_TEST_STABLE_PLUGIN, "--schemas"}, &out, &err) == 0);
  INFO(err);
  CHECK_THAT(out, Catch::Contains("stable_kernels::rms_norm(Tensor! result, Tensor input, "
                                  "Tensor weight, float epsilon) -> ()\n"));
  CHECK_THAT(out,
             Catch::Contains("stable_kernels::permute_cols(Tensor A, Tensor perm) -> Tensor\n"));
}

TEST_CASE("opreg ops loads a library that is a Python extension module", "[cli]") {
  std::string out, err;
  const int status = Run({"--load", OPREG_TEST_PYMODULE_PLUGIN}, &out, &err);
  INFO(err);
  if (status == 2 && err.find("no libpython3 was found") != std::string::npos) {
    WARN("skipped: no libpython3 on this machine to resolve the module's symbols");
    return;
  }
  REQUIRE(status == 0);
  CHECK_THAT(out, Catch::Contains("pymodule_plugin::same\n"));
}

TEST_CASE("opreg ops reports what it cannot do", "[cli]") {
  std::string out, err;
  CHECK(Run({"nope::nothing"}, &out, &err) == 1);
  CHECK(err == "opreg ops: Could not find operator nope::nothing\n");
  CHECK(Run({"--load", "/nonexistent/libx.so"}, &out, &err) == 2);
  CHECK_THAT(err, Catch::StartsWith("opreg ops: cannot load /nonexistent/libx.so: "));
  CHECK(Run({"--bogus"}, &out, &err) == 2);
  CHECK(Run({"a::b", "c::d"}, &out, &err) == 2);
  // A device (or FIFO: dlopen would block on it) is refused before dlopen sees it.
  CHECK(Run({"--load", "/dev/zero"}, &out, &err) == 2);
  CHECK(err == "opreg ops: cannot load /dev/zero: is not a regular file (a FIFO, device or "
               "socket)\n");
}

// Last: the errors of a broken library stay recorded for the rest of the process.
TEST_CASE("opreg ops exits 1 for a library with registration errors and lists the rest",
          "[cli]") {
  std::string out, err;
  CHECK(Run({"--load", OPREG_TEST_PLUGIN_BROKEN}, &out, &err) == 1);
  CHECK_THAT(err, Catch::StartsWith("registration error: unknown type specifier 'Tensr'"));
  CHECK_THAT(err, Catch::Contains("ops_plugin_broken.cc:13)\n"));
  // The failed def costs its own op, nothing else (its kernel waits for a def, as in torch).
  CHECK_THAT(out, !Catch::Contains("broken_plugin::typo\n"));
  CHECK_THAT(out, Catch::Contains("broken_plugin::before\n"));
  CHECK_THAT(out, Catch::Contains("broken_plugin::after\n"));
}

}  // namespace
}  // namespace opreg::cli
