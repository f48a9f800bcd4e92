// Helpers shared by the schema tests.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "opreg/schema/schema_parser.h"

namespace opreg::testing {

// Parses `text` (which must parse) and returns the schema.
inline FunctionSchema MustParse(const std::string& text) {
  absl::StatusOr<FunctionSchema> s = ParseSchema(text);
  INFO(text << "\n" << s.status().message());
  REQUIRE(s.ok());
  return *std::move(s);
}

// Canonical form of `text` (which must parse); also checks that the canonical form parses back
// to an equal model and prints identically.
inline std::string Canon(const std::string& text) {
  FunctionSchema s = MustParse(text);
  const std::string printed = s.str();
  FunctionSchema again = MustParse(printed);
  INFO("input: " << text << "\nprinted: " << printed << "\nreprinted: " << again.str());
  CHECK(again.str() == printed);
  CHECK(again == s);
  return printed;
}

// The bare message of the error `text` gives (which must not parse).
inline SchemaParseError ErrorOf(const std::string& text) {
  absl::StatusOr<FunctionSchema> s = ParseSchema(text);
  INFO(text);
  REQUIRE_FALSE(s.ok());
  std::optional<SchemaParseError> e = GetSchemaParseError(s.status());
  REQUIRE(e.has_value());
  return *e;
}

}  // namespace opreg::testing
