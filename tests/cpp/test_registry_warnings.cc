// Registrations that are allowed but suspicious warn on the `opreg` logger.
#include <spdlog/sinks/ostream_sink.h>

#include <catch2/catch.hpp>
#include <memory>
#include <sstream>

#include "opreg/core/logging.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::DispatchKey;
using opreg::Library;
using opreg::Tensor;

// Captures what the `opreg` logger writes while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_st>(out_)) {
    sink_->set_pattern("%l: %v");
    opreg::Logger().sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = opreg::Logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::sinks::ostream_sink_st> sink_;
};

Tensor Same(const Tensor& x) { return x; }

TEST_CASE("overriding a kernel warns with both locations", "[registry][warnings]") {
  Library lib(Library::FRAGMENT, "warn1", std::nullopt, "a.cc", 1);
  lib.def("f(Tensor x) -> Tensor").impl("f", DispatchKey::kCPU, &Same, "a.cc", 2);
  LogCapture log;
  lib.impl("f", DispatchKey::kCPU, &Same, "a.cc", 3);
  CHECK(log.str() ==
        "warning: Overriding a previously registered kernel for the same operator and the same "
        "dispatch key\n  operator: warn1::f\n  dispatch key: CPU\n  previous kernel: registered "
        "at a.cc:2\n  new kernel: registered at a.cc:3\n");
}

TEST_CASE("symmetric-memory registrations warn on a missing group_name and on re-registration",
          "[registry][warnings]") {
  Library lib(Library::FRAGMENT, "warn2", std::nullopt, "b.cc", 1);
  lib.def("f(Tensor input) -> Tensor");
  {
    LogCapture log;
    lib.register_symm_mem_args("f", {"input"}, opreg::SymmMemRequirement::kRequired, "b.cc", 2);
    CHECK_THAT(log.str(), Catch::StartsWith("warning: warn2::f has no 'str group_name' argument"));
  }
  LogCapture log;
  lib.register_symm_mem_args("f", {"input"}, opreg::SymmMemRequirement::kRequired, "b.cc", 3);
  CHECK_THAT(log.str(), Catch::Contains("warning: Symmetric-memory arguments of warn2::f were "
                                        "registered before (registered at b.cc:2); the new "
                                        "registration (registered at b.cc:3) overwrites them\n"));
}

TEST_CASE("duplicate argument names are accepted with a warning", "[registry][warnings]") {
  Library lib(Library::FRAGMENT, "warn3", std::nullopt, "c.cc", 1);
  LogCapture log;
  lib.def("f(Tensor q, Tensor q) -> ()");
  CHECK(log.str() ==
        "warning: warn3::f: argument name 'q' is used twice (#0 and #1); keyword "
        "calls bind to the first\n");
}

TEST_CASE("same-named ops that do not link as out variants warn", "[registry][warnings]") {
  Library lib(Library::FRAGMENT, "warn4", std::nullopt, "d.cc", 1);
  lib.def("f(Tensor x) -> Tensor");
  LogCapture log;
  lib.def("f.out(Tensor y, *, Tensor(a!) out) -> Tensor(a!)");
  CHECK_THAT(log.str(), Catch::StartsWith("warning: warn4::f and warn4::f.out are named as "
                                          "functional op and out variant, but do not link: "));
  CHECK_FALSE(opreg::Dispatcher::Get().OutVariantOf(opreg::OperatorName("warn4::f", "")));
}

}  // namespace
