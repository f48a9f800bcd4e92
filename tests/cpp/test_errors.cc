// opreg::Error, the OPREG_CHECK macros, ArgErrorMessage, Status interop and the logger.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <string_view>

#include "opreg/core/error.h"
#include "opreg/core/logging.h"

using opreg::Error;
using opreg::ErrorKind;

namespace {

// Runs fn, which must throw opreg::Error, and returns the error.
template <class Fn>
Error CatchError(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected opreg::Error");
  return Error(ErrorKind::kRuntime, "unreachable");
}

}  // namespace

TEST_CASE("OPREG_CHECK default and custom messages") {
  const int x = 3;
  Error e = CatchError([&] { OPREG_CHECK(x == 4); });
  CHECK(e.kind() == ErrorKind::kRuntime);
  CHECK(e.message() == "Expected x == 4 to be true, but got false.");
  CHECK(std::string(e.file()).find("test_errors.cc") != std::string::npos);
  CHECK(e.line() > 0);
  CHECK(std::string(e.what()) == e.message());

  std::string_view sv = "view";
  e = CatchError(
      [&] { OPREG_CHECK(x < 0, "x is ", x, ", ", sv, " ", 2.5, " ", std::string("s")); });
  CHECK(e.message() == "x is 3, view 2.5 s");
  OPREG_CHECK(x == 3, "never built");  // Passing check: no throw.
}

TEST_CASE("OPREG_CHECK kinds") {
  CHECK(CatchError([] { OPREG_CHECK_VALUE(false, "v"); }).kind() == ErrorKind::kValue);
  CHECK(CatchError([] { OPREG_CHECK_TYPE(false, "t"); }).kind() == ErrorKind::kType);
  CHECK(CatchError([] { OPREG_CHECK_INDEX(false, "i"); }).kind() == ErrorKind::kIndex);
  CHECK(CatchError([] { OPREG_CHECK_NOT_IMPLEMENTED(false); }).kind() ==
        ErrorKind::kNotImplemented);
  Error e = CatchError([] { OPREG_THROW(kKey, "no op named ", "'a::b'"); });
  CHECK(e.kind() == ErrorKind::kKey);
  CHECK(e.message() == "no op named 'a::b'");
  CHECK(opreg::ErrorKindName(ErrorKind::kNotImplemented) == "NotImplementedError");
  CHECK(opreg::ErrorKindName(ErrorKind::kKey) == "KeyError");
}

TEST_CASE("OPREG_CHECK evaluates the condition once and the message lazily") {
  int cond_calls = 0;
  int msg_calls = 0;
  auto cond = [&] { return ++cond_calls > 0; };
  auto msg = [&] {
    ++msg_calls;
    return std::string("m");
  };
  OPREG_CHECK(cond(), msg());
  CHECK(cond_calls == 1);
  CHECK(msg_calls == 0);
  auto failing = [&] { return ++cond_calls < 0; };
  Error e = CatchError([&] { OPREG_CHECK(failing(), msg()); });
  CHECK(cond_calls == 2);
  CHECK(msg_calls == 1);
  CHECK(e.message() == "m");
}

TEST_CASE("ArgErrorMessage exact text") {
  CHECK(opreg::ArgErrorMessage("mylib::rms_norm", "weight", 2, "dtype bf16", "f32") ==
        "[mylib::rms_norm] argument 'weight' (#2): expected dtype bf16, got f32");
  CHECK(opreg::ArgErrorMessage("a::b", "x", 0, "a cuda tensor", "cpu") ==
        "[a::b] argument 'x' (#0): expected a cuda tensor, got cpu");
}

TEST_CASE("Status to Error mapping") {
  opreg::ThrowIfError(absl::OkStatus());  // No throw.
  const std::pair<absl::Status, ErrorKind> cases[] = {
      {absl::InvalidArgumentError("m"), ErrorKind::kValue},
      {absl::NotFoundError("m"), ErrorKind::kKey},
      {absl::UnimplementedError("m"), ErrorKind::kNotImplemented},
      {absl::OutOfRangeError("m"), ErrorKind::kIndex},
      {absl::FailedPreconditionError("m"), ErrorKind::kRuntime},
      {absl::AlreadyExistsError("m"), ErrorKind::kRuntime},
      {absl::InternalError("m"), ErrorKind::kRuntime},
  };
  for (const auto& [status, kind] : cases) {
    INFO(status.ToString());
    Error e = CatchError([&] { opreg::ThrowIfError(status); });
    CHECK(e.kind() == kind);
    CHECK(e.message() == "m");
  }
}

TEST_CASE("Error to Status round trip") {
  const std::pair<ErrorKind, absl::StatusCode> cases[] = {
      {ErrorKind::kValue, absl::StatusCode::kInvalidArgument},
      {ErrorKind::kType, absl::StatusCode::kInvalidArgument},
      {ErrorKind::kKey, absl::StatusCode::kNotFound},
      {ErrorKind::kNotImplemented, absl::StatusCode::kUnimplemented},
      {ErrorKind::kIndex, absl::StatusCode::kOutOfRange},
      {ErrorKind::kRuntime, absl::StatusCode::kInternal},
  };
  for (const auto& [kind, code] : cases) {
    absl::Status status = opreg::ToStatus(Error(kind, "boom", "f.cc", 3));
    CHECK(status.code() == code);
    CHECK(std::string(status.message()) == "boom");                          // No location.
    CHECK(CatchError([&] { opreg::ThrowIfError(status); }).kind() == kind);  // Kind survives.
  }
}

TEST_CASE("log level parsing and environment") {
  CHECK(opreg::ParseLogLevel("trace") == spdlog::level::trace);
  CHECK(opreg::ParseLogLevel("WARNING") == spdlog::level::warn);
  CHECK(opreg::ParseLogLevel(" error ") == spdlog::level::err);
  CHECK(opreg::ParseLogLevel("off") == spdlog::level::off);
  CHECK_FALSE(opreg::ParseLogLevel("loud").has_value());

  unsetenv("OPREG_LOG_LEVEL");
  unsetenv("SPDLOG_LEVEL");
  CHECK(opreg::LogLevelFromEnv() == spdlog::level::warn);
  setenv("SPDLOG_LEVEL", "info", 1);
  CHECK(opreg::LogLevelFromEnv() == spdlog::level::info);
  setenv("SPDLOG_LEVEL", "off,opreg=debug", 1);
  CHECK(opreg::LogLevelFromEnv() == spdlog::level::debug);
  setenv("SPDLOG_LEVEL", "bogus", 1);
  CHECK(opreg::LogLevelFromEnv() == spdlog::level::warn);
  setenv("OPREG_LOG_LEVEL", "critical", 1);
  CHECK(opreg::LogLevelFromEnv() == spdlog::level::critical);
  setenv("OPREG_LOG_LEVEL", "nonsense", 1);  // Ignored: falls through to SPDLOG_LEVEL.
  setenv("SPDLOG_LEVEL", "error", 1);
  CHECK(opreg::LogLevelFromEnv() == spdlog::level::err);

  // The logger is created on first use (this is the first use in this binary) with that level.
  setenv("OPREG_LOG_LEVEL", "debug", 1);
  spdlog::logger& logger = opreg::Logger();
  CHECK(logger.name() == "opreg");
  CHECK(logger.level() == spdlog::level::debug);
  CHECK(&opreg::Logger() == &logger);
  CHECK(spdlog::get("opreg").get() == &logger);
  unsetenv("OPREG_LOG_LEVEL");
  unsetenv("SPDLOG_LEVEL");
}
