// Library and the OPREG_LIBRARY macros: declaring, implementing, the rules enforced at
// registration, and deregistration.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::Dispatcher;
using opreg::DispatchKey;
using opreg::Library;
using opreg::Tensor;

Tensor AddOne(const Tensor& x) {
  Tensor y = opreg::empty_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) y.set({i}, x.at({i}) + 1);
  return y;
}
Tensor AddTwoMeta(const Tensor& x) { return opreg::empty_like(x); }
Tensor Twice(const Tensor& x, int64_t k) { return x; }

// ---- Static registration through the macros (run when this binary loads) ----
OPREG_LIBRARY(libtest, m) {
  m.def("add_one(Tensor x) -> Tensor");
  m.def("twice(Tensor x, int k=2) -> Tensor", &Twice);
}
OPREG_LIBRARY_IMPL(libtest, CPU, m) { m.impl("add_one", &AddOne); }
OPREG_LIBRARY_IMPL(libtest, Meta, m) { m.impl("add_one", &AddTwoMeta); }
OPREG_LIBRARY_FRAGMENT(libtest, m) { m.def("frag(Tensor x) -> Tensor"); }
// A second DEF block for the namespace: refused at load time without aborting the process.
OPREG_LIBRARY(libtest_dup, m) { m.def("f(Tensor x) -> Tensor"); }
namespace second {
OPREG_LIBRARY(libtest_dup, m) { m.def("g(Tensor x) -> Tensor"); }
}  // namespace second
// Failed calls in the middle of blocks: each is recorded and the rest of its block still runs.
OPREG_LIBRARY(libtest_partial, m) {
  m.def("first(Tensor x) -> Tensor");
  m.def("broken(Tensor x -> Tensor");  // kPartialParseErrorLine
  m.def("second(Tensor x) -> Tensor");
  m.def("first(Tensor y) -> Tensor");  // defined twice
  m.def("third(Tensor x) -> Tensor");
}
constexpr int kPartialParseErrorLine = __LINE__ - 5;
OPREG_LIBRARY_IMPL(libtest_partial, CPU, m) {
  m.impl("first", &AddOne);
  m.impl("second", &Twice);  // C++ signature disagrees with the schema
  m.impl("third", &AddOne);
}

TEST_CASE("macros register defs and kernels at load time", "[library]") {
  auto op = Dispatcher::Get().FindOpOrThrow("libtest::add_one");
  Tensor x = opreg::arange(4, opreg::DType::kFloat32);
  Tensor y = op.typed<Tensor(const Tensor&)>().call(x);
  CHECK(y.at({3}) == 4.0);
  CHECK(Dispatcher::Get().FindOp("libtest::frag").has_value());
  // def(schema, fn) defines and implements in one go.
  auto twice = Dispatcher::Get().FindOpOrThrow("libtest::twice");
  CHECK(twice.typed<Tensor(const Tensor&, int64_t)>().call(x, 3).is_alias_of(x));
}

// The static registration errors that mention `needle`.
std::vector<std::string> StaticErrorsMentioning(const std::string& needle) {
  std::vector<std::string> out;
  for (const std::string& e : opreg::StaticRegistrationErrors()) {
    if (e.find(needle) != std::string::npos) out.push_back(e);
  }
  return out;
}

TEST_CASE("a second OPREG_LIBRARY for a namespace is a load-time error, not a crash", "[library]") {
  std::vector<std::string> errors = StaticErrorsMentioning("libtest_dup");
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::StartsWith("Only a single OPREG_LIBRARY can be used to register "
                                          "the namespace libtest_dup"));
  CHECK_THAT(errors[0],
             Catch::Contains("Previous registration of OPREG_LIBRARY was registered at"));
  CHECK_THAT(errors[0], Catch::Contains("test_library.cc"));
  CHECK(Dispatcher::Get().FindOp("libtest_dup::f").has_value());
  CHECK_FALSE(Dispatcher::Get().FindOp("libtest_dup::g").has_value());
}

TEST_CASE("a failed call in a static block costs only itself; every error is kept",
          "[library]") {
  Dispatcher& d = Dispatcher::Get();
  CHECK(d.FindOp("libtest_partial::first").has_value());
  CHECK(d.FindOp("libtest_partial::second").has_value());
  CHECK(d.FindOp("libtest_partial::third").has_value());
  CHECK_FALSE(d.FindOp("libtest_partial::broken").has_value());
  // The kernels after the refused one are registered too.
  Tensor x = opreg::arange(3, opreg::DType::kFloat32);
  CHECK(d.FindOpOrThrow("libtest_partial::third").typed<Tensor(const Tensor&)>().call(x).at({2}) ==
        3.0);
  std::vector<std::string> errors = opreg::StaticRegistrationErrors();
  std::vector<std::string> partial;
  for (const std::string& e : errors) {
    if (e.find("OPREG_LIBRARY") != std::string::npos && e.find("libtest_dup") == std::string::npos) {
      partial.push_back(e);
    }
  }
  REQUIRE(partial.size() == 3);
  // Each names what failed and the file:line of the very call.
  CHECK_THAT(partial[0], Catch::Contains("broken"));
  CHECK_THAT(partial[0], Catch::EndsWith(
                             "(registration at " + std::string(__FILE__) + ":" +
                             std::to_string(kPartialParseErrorLine) + ")"));
  CHECK_THAT(partial[1], Catch::Contains("libtest_partial::first"));
  CHECK_THAT(partial[2], Catch::Contains("libtest_partial::second"));
  CHECK_THAT(partial[2], Catch::Contains("(registration at "));
}

TEST_CASE("OPREG_STRICT_REGISTRATION=1 makes the first static error fatal at load time",
          "[library]") {
  // This very binary has failing static blocks: run it again under the variable.
  const std::string command =
      "OPREG_STRICT_REGISTRATION=1 /proc/" + std::to_string(getpid()) + "/exe --list-tests 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  CHECK(status != 0);
  CHECK_THAT(output, Catch::Contains("opreg: registration failed (fatal: "
                                     "OPREG_STRICT_REGISTRATION=1): "));
  CHECK_THAT(output, Catch::Contains("test_library.cc"));
  CHECK_THAT(output, !Catch::Contains("All available test cases"));  // never got to main
}

TEST_CASE("registrations record file:line and dump per key", "[library]") {
  auto dump = Dispatcher::Get().DumpOp("libtest::add_one");
  REQUIRE(dump.ok());
  CHECK_THAT(*dump, Catch::StartsWith("libtest::add_one(Tensor x) -> Tensor\n  defined at "));
  CHECK_THAT(*dump, Catch::Contains("test_library.cc:"));
  CHECK_THAT(*dump, Catch::Contains("    CPU: registered at "));
  CHECK_THAT(*dump, Catch::Contains("    Meta: registered at "));
  CHECK_THAT(*dump, Catch::Contains("    CUDA: missing"));
  CHECK_THAT(*dump, Catch::Contains("[unboxed opreg::Tensor (opreg::Tensor const&)]"));
}

TEST_CASE("destroying a Library deregisters what it registered", "[library]") {
  {
    Library lib(Library::FRAGMENT, "scoped", std::nullopt, __FILE__, __LINE__);
    lib.def("f(Tensor x) -> Tensor").impl("f", DispatchKey::kCPU, &AddOne);
    CHECK(Dispatcher::Get().FindOp("scoped::f").has_value());
  }
  CHECK_FALSE(Dispatcher::Get().FindOp("scoped::f").has_value());
  // And it can be registered again.
  Library lib(Library::FRAGMENT, "scoped", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> Tensor");
}

TEST_CASE("duplicate def names both locations", "[library]") {
  Library lib(Library::FRAGMENT, "dupdef", std::nullopt, "a.cc", 1);
  lib.def("f(Tensor x) -> Tensor", {}, "a.cc", 10);
  Library other(Library::FRAGMENT, "dupdef", std::nullopt, "b.cc", 1);
  CHECK_THROWS_WITH(
      other.def("f(Tensor y) -> Tensor", {}, "b.cc", 20),
      "Tried to register an operator (dupdef::f(Tensor y) -> Tensor) with the same name and "
      "overload name multiple times. Each overload's schema should only be registered with a "
      "single call to def(). Duplicate registration: registered at b.cc:20. Original "
      "registration: registered at a.cc:10 (Error occurred while processing "
      "OPREG_LIBRARY_FRAGMENT block at b.cc:1)");
}

TEST_CASE("def inside an IMPL block is refused", "[library]") {
  Library lib(Library::IMPL, "implonly", DispatchKey::kCPU, "c.cc", 3);
  CHECK_THROWS_WITH(lib.def("f(Tensor x) -> Tensor"),
                    "def(\"f(Tensor x) -> Tensor\"): Cannot define an operator inside of a "
                    "OPREG_LIBRARY_IMPL block. All def()s should be placed in the (unique) "
                    "OPREG_LIBRARY block for their namespace. (Error occurred while processing "
                    "OPREG_LIBRARY_IMPL block at c.cc:3)");
}

TEST_CASE("namespace mismatch is refused", "[library]") {
  Library lib(Library::FRAGMENT, "nsa", std::nullopt, "d.cc", 4);
  CHECK_THROWS_WITH(lib.def("nsb::f(Tensor x) -> Tensor"),
                    Catch::StartsWith("Explicitly provided namespace (nsb) in schema string does "
                                      "not match namespace of enclosing OPREG_LIBRARY_FRAGMENT "
                                      "block (nsa)."));
  CHECK_THROWS_WITH(lib.impl("nsb::f", &AddOne),
                    Catch::StartsWith("Explicitly provided namespace (nsb) in operator name "
                                      "nsb::f does not match namespace of enclosing "
                                      "OPREG_LIBRARY_FRAGMENT block (nsa)"));
  // The namespace may be repeated when it matches.
  lib.def("nsa::g(Tensor x) -> Tensor");
  CHECK(Dispatcher::Get().FindOp("nsa::g").has_value());
}

TEST_CASE("the wildcard namespace only takes fallbacks", "[library]") {
  CHECK_THROWS_WITH(Library(Library::DEF, "_", std::nullopt, "e.cc", 5),
                    Catch::StartsWith("cannot define OPREG_LIBRARY with the wildcard namespace _"));
  Library impl(Library::IMPL, "notwild", DispatchKey::kCPU, "e.cc", 6);
  CHECK_THROWS_WITH(impl.fallback([](const opreg::OperatorHandle&, opreg::Stack*) {}),
                    Catch::StartsWith("fallback(...): Fallback functions which apply to only a "
                                      "single namespace (you specified notwild) are not "
                                      "supported."));
}

TEST_CASE("a def without a schema or kernel is refused", "[library]") {
  Library lib(Library::FRAGMENT, "noschema", std::nullopt, "f.cc", 7);
  CHECK_THROWS_WITH(lib.def("f"),
                    Catch::StartsWith("def(\"f\"): Full schema string was not specified, and we "
                                      "couldn't infer schema either."));
}

TEST_CASE("a def from a bare name infers the schema from the kernel", "[library]") {
  Library lib(Library::FRAGMENT, "inferred", std::nullopt, "g.cc", 8);
  lib.def("twice", &Twice);
  auto op = Dispatcher::Get().FindOpOrThrow("inferred::twice");
  CHECK(op.schema().str() == "inferred::twice(Tensor _0, int _1) -> Tensor _0");
  CHECK(op.definition().alias_analysis == opreg::AliasAnalysisKind::kConservative);
}

TEST_CASE("impl keys must agree with the block's", "[library]") {
  Library lib(Library::IMPL, "keys", DispatchKey::kCPU, "h.cc", 9);
  CHECK_THROWS_WITH(lib.impl("f", DispatchKey::kCUDA, &AddOne),
                    Catch::StartsWith("impl(\"f\"): Explicitly provided dispatch key (CUDA) is "
                                      "inconsistent with the dispatch key of the enclosing "
                                      "OPREG_LIBRARY_IMPL block (CPU)."));
  lib.impl("f", DispatchKey::kCPU, &AddOne);  // agreeing is fine
}

TEST_CASE("kernels whose C++ signature does not fit the schema are refused", "[library]") {
  Library lib(Library::FRAGMENT, "sig", std::nullopt, "i.cc", 10);
  lib.def("f(Tensor x, float k) -> Tensor", {}, "i.cc", 11);
  CHECK_THROWS_WITH(
      lib.impl("f", DispatchKey::kCPU, &Twice, "i.cc", 12),
      "Inferred operator schema for a C++ kernel function doesn't match the expected function "
      "schema.\n  operator: sig::f\n  expected schema: sig::f(Tensor x, float k) -> Tensor\n    "
      "registered at i.cc:11\n  inferred schema: (Tensor _0, int _1) -> Tensor _0\n    registered "
      "at i.cc:12\n  reason: Type mismatch in argument 2: int vs. float (Error occurred while "
      "processing OPREG_LIBRARY_FRAGMENT block at i.cc:10)");
  lib.def("g(Tensor x) -> (Tensor, Tensor)", {}, "i.cc", 13);
  CHECK_THROWS_WITH(lib.impl("g", DispatchKey::kCPU, &AddOne, "i.cc", 14),
                    Catch::Contains("reason: The number of returns is different. 1 vs 2."));
  // SymInt, ScalarType, Layout and MemoryFormat all take int64_t.
  lib.def("h(Tensor x, SymInt k) -> Tensor", {}, "i.cc", 15);
  lib.impl("h", DispatchKey::kCPU, &Twice);
}

TEST_CASE("a dangling kernel is checked when its def arrives", "[library]") {
  Library impls(Library::IMPL, "dangling", DispatchKey::kCPU, "j.cc", 1);
  impls.impl("f", &Twice, "j.cc", 2);
  auto missing = Dispatcher::Get().FindOpOrError("dangling::f");
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.status().message()),
             Catch::StartsWith("operator dangling::f has kernels (CPU registered at j.cc:2) but "
                               "was never defined"));
  Library defs(Library::FRAGMENT, "dangling", std::nullopt, "j.cc", 3);
  CHECK_THROWS_WITH(defs.def("f(Tensor x) -> Tensor", {}, "j.cc", 4),
                    Catch::Contains("reason: The number of arguments is different. 2 vs 1."));
  defs.def("f(Tensor x, int k) -> Tensor", {}, "j.cc", 5);
  CHECK(Dispatcher::Get().FindOp("dangling::f").has_value());
}

TEST_CASE("kernels of one op must share one C++ signature", "[library]") {
  Library lib(Library::FRAGMENT, "cppsig", std::nullopt, "k.cc", 1);
  lib.def("f(Tensor x, int k) -> Tensor", {}, "k.cc", 2);
  lib.impl("f", DispatchKey::kCPU, &Twice, "k.cc", 3);
  auto other = [](Tensor x, int64_t k) { return x; };
  CHECK_THROWS_WITH(lib.impl("f", DispatchKey::kMeta, other, "k.cc", 4),
                    Catch::StartsWith("Mismatch in kernel C++ signatures\n  operator: "
                                      "cppsig::f(Tensor x, int k) -> Tensor\n    registered at "
                                      "k.cc:2\n  kernel 1: opreg::Tensor (opreg::Tensor const&, "
                                      "long)\n    dispatch key: CPU\n    registered at k.cc:3\n "
                                      " kernel 2: opreg::Tensor (opreg::Tensor, long)\n    "
                                      "dispatch key: Meta\n    registered at k.cc:4"));
}

TEST_CASE("the aliasing rule is enforced at def time", "[library]") {
  Library lib(Library::FRAGMENT, "alias", std::nullopt, "l.cc", 1);
  CHECK_THROWS_WITH(lib.def("f(Tensor(a!) x) -> Tensor(a!)"), Catch::Contains("return ()"));
  lib.def("g(Tensor(a!) x) -> ()");
  lib.def("g.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  auto g = Dispatcher::Get().FindOpOrThrow("alias::g");
  CHECK(g.schema().MutatedArgumentNames() == std::vector<std::string>{"x"});
}

TEST_CASE("tags and custom classes are validated", "[library]") {
  Library lib(Library::FRAGMENT, "tagged", std::nullopt, "m.cc", 1);
  lib.def("f(Tensor x) -> Tensor", {"pt2_compliant_tag"});
  CHECK(Dispatcher::Get().FindOpOrThrow("tagged::f").definition().tags ==
        std::vector<std::string>{"pt2_compliant_tag"});
  CHECK_THROWS_WITH(lib.def("g(Tensor x) -> Tensor", {"no_such_tag"}),
                    Catch::Contains("no_such_tag"));
  CHECK_THROWS_WITH(lib.def("h(tagged.Handle h) -> ()"),
                    Catch::StartsWith("[tagged::h] Unknown custom class type tagged.Handle. "
                                      "Please ensure it is registered"));
  lib.register_class("Handle");
  lib.def("h(tagged.Handle h) -> ()");
  lib.def("k(__torch__.torch.classes.tagged.Handle h) -> ()");
  CHECK(Dispatcher::Get().IsClassRegistered("tagged.Handle"));
}

// Define listeners live for the process: these record only their own namespace.
std::mutex g_heard_mu;
std::vector<std::string> g_heard;

TEST_CASE("define listeners hear each op defined, after it is defined", "[library]") {
  static bool added = false;
  if (!added) {
    added = true;
    Dispatcher::Get().AddDefineListener([](const opreg::OperatorName& name) {
      if (name.ns() != "heard") return;
      // Called without the dispatcher's lock: the op can be looked up from here.
      const bool found = Dispatcher::Get().FindOp(name.str()).has_value();
      std::lock_guard<std::mutex> lock(g_heard_mu);
      g_heard.push_back(name.str() + (found ? "" : " (not found)"));
    });
    Dispatcher::Get().AddDefineListener([](const opreg::OperatorName& name) {
      if (name.ns() == "heard") throw std::runtime_error("a broken listener");
    });
  }
  {
    std::lock_guard<std::mutex> lock(g_heard_mu);
    g_heard.clear();
  }
  Library lib(Library::DEF, "heard", std::nullopt, "heard.cc", 1);
  lib.def("f(Tensor x) -> Tensor");
  lib.def("f.two(Tensor x, int k) -> Tensor");
  // A refused definition is not heard of; the broken listener loses no definition.
  CHECK_THROWS(lib.def("f(Tensor x) -> Tensor"));
  CHECK(Dispatcher::Get().FindOp("heard::f.two").has_value());
  std::lock_guard<std::mutex> lock(g_heard_mu);
  CHECK(g_heard == std::vector<std::string>{"heard::f", "heard::f.two"});
}


}  // namespace
