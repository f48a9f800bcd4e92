// Parser for PyTorch's FunctionSchema language: `ns::op.overload(Tensor(a!) x, *, int k=1)
// -> (Tensor, Tensor)`. The whole grammar of c10's parseSchema (see
// docs/reference/schema_grammar.md §1), with the same models and the same acceptance.
//
// Errors are absl::InvalidArgumentError whose message gives the line, the column, PyTorch's
// wording where it has one, and an excerpt with a caret; GetSchemaParseError() recovers the
// parts. The parser never throws and never crashes on any input.
// Thread safety: all functions are reentrant.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "opreg/schema/function_schema.h"
#include "opreg/schema/operator_name.h"

namespace opreg {

struct SchemaParseOptions {
  // Accept lowercase unknown identifiers as type variables (`t`, `t1`). Always on for schemas
  // whose name starts with `aten::` or `prim::`, as in PyTorch.
  bool allow_typevars = false;
};

// Parses exactly one schema (an optional trailing newline is allowed).
absl::StatusOr<FunctionSchema> ParseSchema(std::string_view text,
                                           const SchemaParseOptions& options = {});
// Parses a schema, or a bare operator name (`ns::op.overload`) when no argument list follows.
absl::StatusOr<std::variant<OperatorName, FunctionSchema>> ParseSchemaOrName(
    std::string_view text, const SchemaParseOptions& options = {});

// Where and why a parse failed.
struct SchemaParseError {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, in bytes
  std::string message;
};
// The location and bare message of an error returned by the functions above, or nullopt for
// any other status.
std::optional<SchemaParseError> GetSchemaParseError(const absl::Status& status);

}  // namespace opreg
