// Opening the files the CLI commands read, with the reason when they cannot be read.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace opreg::cli {

// Opens `path` for reading into `in`; on failure returns false and sets `why` ("is a
// directory", or errno's text). std::ifstream alone "opens" a directory and then reads
// nothing, which would pass for an empty input.
inline bool OpenInput(const std::string& path, std::ifstream* in, std::string* why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *why = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *why = "is a directory";
    return false;
  }
  in->open(path, std::ios::binary);
  if (!*in) {
    *why = std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace opreg::cli
