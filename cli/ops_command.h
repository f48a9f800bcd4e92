// `opreg ops`: lists the ops of the loaded libraries, or dumps one.
#pragma once

#include <string>
#include <vector>

namespace opreg::cli {

// Entry point for `opreg ops [--load LIB.so]... [--schemas] [NAME]`. Returns the exit status:
// 0, 1 when an op is not found or a registration failed, 2 on a usage or load error.
int RunOpsCommand(const std::vector<std::string>& args);

}  // namespace opreg::cli
