// libFuzzer target for the schema parser and printer. Beyond "no crash, leak or UB" (the
// sanitizers' job) it checks the printer's contract: whatever parses prints to a text that
// parses again to an equal model and prints identically.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "opreg/schema/schema_parser.h"

namespace {

[[noreturn]] void Die(const char* what, std::string_view a, std::string_view b) {
  std::fprintf(stderr, "%s\n  first:  %.*s\n  second: %.*s\n", what, static_cast<int>(a.size()),
               a.data(), static_cast<int>(b.size()), b.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<opreg::FunctionSchema> schema = opreg::ParseSchema(text);
  if (!schema.ok()) {
    // Every error carries a location inside the input.
    std::optional<opreg::SchemaParseError> e = opreg::GetSchemaParseError(schema.status());
    if (!e || e->line < 1 || e->column < 1) Die("error without a location", text, "");
    return 0;
  }
  const std::string printed = schema->str();
  absl::StatusOr<opreg::FunctionSchema> again = opreg::ParseSchema(printed);
  if (!again.ok()) Die("printed schema does not parse", text, printed);
  if (again->str() != printed) Die("printing is not stable", printed, again->str());
  if (!(*again == *schema)) Die("printed schema parses to another model", text, printed);
  (void)opreg::ParseSchemaOrName(text);
  return 0;
}
