#include "schema_command.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/ascii.h"
#include "input_file.h"
#include "opreg/schema/schema_parser.h"

namespace opreg::cli {
namespace {

constexpr char kUsage[] =
    "usage: opreg schema [--namespace NS] [FILE...]\n"
    "Reads operator schemas, one per line, from the files or stdin and prints the canonical\n"
    "form of each (PyTorch's str(schema)) on its own line; a line that does not parse prints\n"
    "'error: col N: <message>'. Exit status 1 if any line failed.\n"
    "  --namespace NS   prefix NS:: to schemas without a namespace\n";

}  // namespace

int CanonicalizeSchemas(std::istream& in, std::ostream& out, const SchemaCommandOptions& options) {
  SchemaParseOptions parse_options;
  // PyTorch allows type variables in aten:: and prim:: schemas; a namespace given here counts.
  parse_options.allow_typevars =
      options.default_namespace == "aten" || options.default_namespace == "prim";
  int failures = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (absl::StripAsciiWhitespace(line).empty()) {
      out << '\n';
      continue;
    }
    absl::StatusOr<FunctionSchema> schema = ParseSchema(line, parse_options);
    if (schema.ok()) {
      if (!options.default_namespace.empty()) {
        schema->SetNamespaceIfNotSet(options.default_namespace);
      }
      out << schema->str() << '\n';
      continue;
    }
    ++failures;
    std::optional<SchemaParseError> error = GetSchemaParseError(schema.status());
    if (error) {
      out << "error: col " << error->column << ": " << error->message << '\n';
    } else {
      out << "error: col 0: " << schema.status().message() << '\n';
    }
  }
  return failures;
}

int RunSchemaCommand(const std::vector<std::string>& args) {
  SchemaCommandOptions options;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--namespace" || a == "-n") {
      if (i + 1 >= args.size()) {
        std::cerr << "opreg schema: --namespace needs a value\n" << kUsage;
        return 2;
      }
      options.default_namespace = args[++i];
    } else if (a.rfind("--namespace=", 0) == 0) {
      options.default_namespace = a.substr(12);
    } else if (a.size() > 1 && a[0] == '-') {
      std::cerr << "opreg schema: unknown option " << a << "\n" << kUsage;
      return 2;
    } else {
      files.push_back(a);
    }
  }
  const std::string& ns = options.default_namespace;
  const bool identifier =
      !ns.empty() && !std::isdigit(static_cast<unsigned char>(ns[0])) &&
      std::all_of(ns.begin(), ns.end(),
                  [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (!ns.empty() && !identifier) {
    std::cerr << "opreg schema: --namespace must be an identifier (letters, digits and _, not "
                 "starting with a digit), got '"
              << ns << "'\n";
    return 2;
  }
  int failures = 0;
  if (files.empty()) {
    failures = CanonicalizeSchemas(std::cin, std::cout, options);
  } else {
    for (const std::string& path : files) {
      std::ifstream in;
      std::string why;
      if (!OpenInput(path, &in, &why)) {
        std::cerr << "opreg schema: cannot read " << path << ": " << why << "\n";
        return 2;
      }
      failures += CanonicalizeSchemas(in, std::cout, options);
    }
  }
  std::cout.flush();
  return failures > 0 ? 1 : 0;
}

}  // namespace opreg::cli
