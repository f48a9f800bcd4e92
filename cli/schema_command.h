// `opreg schema`: canonicalizes schemas, one per line.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace opreg::cli {

struct SchemaCommandOptions {
  // Prefixed as `NS::` to schemas that have no namespace.
  std::string default_namespace;
};

// Reads schemas one per line from `in` and writes, for each line in order, its canonical form or
// `error: col N: <message>`. Blank lines are echoed blank. Returns the number of failed lines.
int CanonicalizeSchemas(std::istream& in, std::ostream& out, const SchemaCommandOptions& options);

// Entry point for `opreg schema [--namespace NS] [FILE...]` (stdin when no file is given).
// Returns the process exit status: 0, 1 if any line failed, 2 on a usage or I/O error.
int RunSchemaCommand(const std::vector<std::string>& args);

}  // namespace opreg::cli
