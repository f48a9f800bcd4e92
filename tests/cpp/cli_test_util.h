// Shared by the CLI tests: run a command entry point with stdout and stderr captured.
#pragma once

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace opreg::cli::testing {

// Calls `command(args)` with std::cout and std::cerr redirected into `out` and `err`.
template <class Command>
int RunCaptured(Command command, const std::vector<std::string>& args, std::string* out,
                std::string* err) {
  std::ostringstream o, e;
  std::streambuf* old_out = std::cout.rdbuf(o.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(e.rdbuf());
  const int status = command(args);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  *out = o.str();
  *err = e.str();
  return status;
}

}  // namespace opreg::cli::testing
