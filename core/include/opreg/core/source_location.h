// Where a registration was made: `file:line`, shown in registry dumps and error messages.
//
// Value type; thread-compatible.
#pragma once

#include <string>

namespace opreg {

struct SourceLocation {
  std::string file;
  int line = 0;

  // "file:line", or "an unknown location".
  std::string str() const {
    return file.empty() ? "an unknown location" : file + ":" + std::to_string(line);
  }
};

}  // namespace opreg
