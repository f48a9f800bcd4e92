// The one opreg logger.
//
// Logger() returns the spdlog logger named "opreg" (stderr, colour when a terminal), created on
// first use in a thread-safe way and registered with spdlog (so spdlog::get("opreg") finds it).
// Its initial level comes from the environment:
//   OPREG_LOG_LEVEL = trace | debug | info | warn | error | critical | off
//   else SPDLOG_LEVEL (a bare level, or "opreg=<level>" among comma-separated entries),
//   else warn.
// Unrecognized values are ignored (falling through to the next source).
//
// Thread safety: Logger() and the logger itself are safe to use from any thread.
#pragma once

#include <spdlog/spdlog.h>

#include <optional>
#include <string_view>

namespace opreg {

spdlog::logger& Logger();

// Parses one level name (also "warning", "err"); nullopt when unknown.
std::optional<spdlog::level::level_enum> ParseLogLevel(std::string_view name);

// The level the environment asks for now (the rule above); Logger() uses it once at creation.
spdlog::level::level_enum LogLevelFromEnv();

}  // namespace opreg
