#include "opreg/core/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "opreg/core/string_util.h"

namespace opreg {

std::optional<spdlog::level::level_enum> ParseLogLevel(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(ToAbsl(name)));
  // spdlog::level::from_str maps unknown names to "off", which would silently mute the logger on
  // a typo; match names explicitly instead.
  if (lower == "trace") return spdlog::level::trace;
  if (lower == "debug") return spdlog::level::debug;
  if (lower == "info") return spdlog::level::info;
  if (lower == "warn" || lower == "warning") return spdlog::level::warn;
  if (lower == "error" || lower == "err") return spdlog::level::err;
  if (lower == "critical") return spdlog::level::critical;
  if (lower == "off") return spdlog::level::off;
  return std::nullopt;
}

namespace {

// SPDLOG_LEVEL follows spdlog's env syntax: "info" or "info,opreg=debug,other=off". A
// logger-specific entry wins over the bare (global) one.
std::optional<spdlog::level::level_enum> ParseSpdlogEnv(std::string_view value) {
  std::optional<spdlog::level::level_enum> global;
  for (absl::string_view entry : absl::StrSplit(ToAbsl(value), ',', absl::SkipWhitespace())) {
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      if (auto level = ParseLogLevel(FromAbsl(entry))) global = level;
    } else if (absl::StripAsciiWhitespace(entry.substr(0, eq)) == "opreg") {
      if (auto level = ParseLogLevel(FromAbsl(entry.substr(eq + 1)))) return level;
    }
  }
  return global;
}

}  // namespace

spdlog::level::level_enum LogLevelFromEnv() {
  if (const char* v = std::getenv("OPREG_LOG_LEVEL")) {
    if (auto level = ParseLogLevel(v)) return *level;
  }
  if (const char* v = std::getenv("SPDLOG_LEVEL")) {
    if (auto level = ParseSpdlogEnv(v)) return *level;
  }
  return spdlog::level::warn;
}

spdlog::logger& Logger() {
  // A function-local static gives thread-safe one-time creation. The shared_ptr is kept here
  // too, so the logger outlives spdlog::drop_all() calls by other code.
  static const std::shared_ptr<spdlog::logger> logger = [] {
    std::shared_ptr<spdlog::logger> existing = spdlog::get("opreg");
    if (existing) return existing;
    auto created = std::make_shared<spdlog::logger>(
        "opreg", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    created->set_level(LogLevelFromEnv());
    try {
      spdlog::register_logger(created);
    } catch (const spdlog::spdlog_ex&) {
      // Another library registered "opreg" concurrently; ours still works, unregistered.
    }
    return created;
  }();
  return *logger;
}

}  // namespace opreg
