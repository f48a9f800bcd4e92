// The `opreg` command-line tool: one subcommand per job.
#include <iostream>
#include <string>
#include <vector>

#include "ops_command.h"
#include "plan_command.h"
#include "schema_command.h"

namespace {

constexpr char kUsage[] =
    "usage: opreg <command> [args]\n"
    "commands:\n"
    "  schema    canonicalize operator schemas (PyTorch's FunctionSchema language)\n"
    "  ops       list the registered operators, or dump one\n"
    "  plan      place a buffer trace (JSON) in one arena and compare with allocator models\n"
    "  version   print the opreg version\n"
    "Run 'opreg <command> --help' for a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "schema") return opreg::cli::RunSchemaCommand(args);
  if (command == "ops") return opreg::cli::RunOpsCommand(args);
  if (command == "plan") return opreg::cli::RunPlanCommand(args);
  if (command == "version" || command == "--version") {
    std::cout << "opreg " << OPREG_VERSION << "\n";
    return 0;
  }
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "opreg: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
