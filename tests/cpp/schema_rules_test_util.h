// Helpers shared by the schema-rule tests (test_schema_rules.cc,
// test_schema_out_variant_rules.cc): the message of a rule's error, and the ATen corpus, parsed
// once, with lookup of one of its operators by name.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "opreg/schema/function_schema.h"
#include "schema_test_util.h"

namespace opreg::testing::schema_rules {

template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

inline std::string ErrorOf(const absl::Status& status) {
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

// The ATen corpus, each line prefixed with `aten::`.
inline const std::vector<FunctionSchema>& AtenCorpus() {
  static const std::vector<FunctionSchema>* const corpus = [] {
    auto* schemas = new std::vector<FunctionSchema>();
    std::ifstream in(OPREG_CORPUS_DIR "/aten_schemas.txt");
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty()) schemas->push_back(MustParse("aten::" + line));
    }
    return schemas;
  }();
  return *corpus;
}

inline const FunctionSchema& AtenOp(const std::string& name) {
  for (const FunctionSchema& s : AtenCorpus()) {
    if (s.operator_name().str() == name) return s;
  }
  FAIL("not in the corpus: " << name);
  throw std::logic_error("unreachable");
}

}  // namespace opreg::testing::schema_rules
