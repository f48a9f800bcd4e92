// Opening the files the CLI commands read, with the reason when they cannot be read.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace opreg::cli {

// The largest input file the commands read (a trace or a schema list; either is far smaller).
inline constexpr off_t kMaxInputBytes = off_t{1} << 30;

// Whether `path` is a regular file the commands may read or load; otherwise false with `why`
// (errno's text, "is a directory", "is not a regular file (a FIFO, device or socket)"). A FIFO
// would block open() until a writer came, /dev/zero would be read without end: both are
// refused up front (stdin is how to pipe input to the commands that read files).
inline bool CheckRegularFile(const std::string& path, std::string* why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *why = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *why = "is a directory";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = "is not a regular file (a FIFO, device or socket)";
    return false;
  }
  if (st.st_size > kMaxInputBytes) {
    *why = "is larger than 1 GiB";
    return false;
  }
  return true;
}

// Opens `path` (a regular file, see CheckRegularFile) for reading into `in`; on failure returns
// false and sets `why`. std::ifstream alone "opens" a directory and then reads nothing, which
// would pass for an empty input.
inline bool OpenInput(const std::string& path, std::ifstream* in, std::string* why) {
  if (!CheckRegularFile(path, why)) {
    if (why->rfind("is not a regular file", 0) == 0) *why += "; pipe such input to stdin";
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
