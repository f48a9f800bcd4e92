// FileStore: one file per key; Set writes a temporary file and renames it over the key (atomic
// for readers), Get polls with exponential backoff (50 us .. 5 ms), Add holds an flock.
#include "opreg/symm_mem/store.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "opreg/core/error.h"

namespace opreg::symm_mem {
namespace {

std::string Errno() { return std::strerror(errno); }

using Clock = std::chrono::steady_clock;

void Backoff(std::chrono::microseconds* delay) {
  std::this_thread::sleep_for(*delay);
  *delay = std::min<std::chrono::microseconds>(*delay * 2, std::chrono::microseconds(5000));
}

void WriteAll(int fd, std::string_view data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    OPREG_CHECK(n >= 0, "FileStore: cannot write ", path, ": ", Errno());
    done += static_cast<size_t>(n);
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

void Store::Wait(const std::vector<std::string>& keys, Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  for (const std::string& k : keys) {
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
    Get(k, std::max(left, Millis(0)));
  }
}

void Store::WaitRanks(std::string_view prefix, int world, int self, Millis timeout,
                      std::string_view what) {
  const auto deadline = Clock::now() + timeout;
  std::chrono::microseconds delay(50);
  std::string value;
  std::vector<bool> seen(static_cast<size_t>(world), false);
  for (;;) {
    std::vector<int> missing;
    for (int r = 0; r < world; ++r) {
      if (r == self || seen[r]) continue;
      if (TryGet(StrCat(prefix, r), &value)) {
        seen[r] = true;
      } else {
        missing.push_back(r);
      }
    }
    if (missing.empty()) return;
    if (Clock::now() >= deadline) {
      std::string ranks;
      for (size_t i = 0; i < missing.size(); ++i) {
        StrAppend(&ranks, i ? ", " : "", missing[i]);
      }
      OPREG_THROW(kRuntime, "symm_mem store: timed out after ", timeout.count(), " ms in ", what,
                  " waiting for key '", prefix, "<rank>': rank(s) ", ranks, " did not arrive");
    }
    Backoff(&delay);
  }
}

FileStore::FileStore(std::string dir) : dir_(std::move(dir)) {
  OPREG_CHECK_VALUE(!dir_.empty(), "FileStore: empty directory");
  if (::mkdir(dir_.c_str(), 0700) != 0) {
    OPREG_CHECK(errno == EEXIST, "FileStore: cannot create ", dir_, ": ", Errno());
  }
}

std::string FileStore::PrivateSocketDirectory() const {
  // A directory someone else created (a shared /tmp path, say) or opened up is no barrier:
  // fall back to the exchange's credential checks rather than trust it.
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) return "";
  return dir_;
}

std::string FileStore::PathOf(std::string_view key) const {
  static const char* kHex = "0123456789ABCDEF";
  std::string name;
  for (size_t i = 0; i < key.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    const bool plain = std::isalnum(c) || c == '-' || c == '_' || (c == '.' && i > 0);
    if (plain) {
      name.push_back(static_cast<char>(c));
    } else {
      name.push_back('%');
      name.push_back(kHex[c >> 4]);
      name.push_back(kHex[c & 15]);
    }
  }
  return StrCat(dir_, "/", name);
}

void FileStore::Set(std::string_view key, std::string_view value) {
  static std::atomic<uint64_t> counter{0};
  const std::string path = PathOf(key);
  const std::string tmp = StrCat(dir_, "/.tmp.", ::getpid(), ".", counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  OPREG_CHECK(fd >= 0, "FileStore: cannot create ", tmp, ": ", Errno());
  try {
    WriteAll(fd, value, tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = Errno();
    ::unlink(tmp.c_str());
    OPREG_THROW(kRuntime, "FileStore: cannot rename ", tmp, " to ", path, ": ", err);
  }
}

bool FileStore::TryGet(std::string_view key, std::string* value) {
  const std::string path = PathOf(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    OPREG_CHECK(errno == ENOENT, "FileStore: cannot open ", path, ": ", Errno());
    return false;
  }
  *value = ReadAll(fd);
  ::close(fd);
  return true;
}

std::string FileStore::Get(std::string_view key, Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  std::chrono::microseconds delay(50);
  std::string value;
  for (;;) {
    if (TryGet(key, &value)) return value;
    if (Clock::now() >= deadline) {
      OPREG_THROW(kRuntime, "symm_mem store: timed out after ", timeout.count(),
                  " ms waiting for key '", key, "' in ", dir_);
    }
    Backoff(&delay);
  }
}

int64_t FileStore::Add(std::string_view key, int64_t delta) {
  const std::string path = PathOf(key);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  OPREG_CHECK(fd >= 0, "FileStore: cannot open ", path, ": ", Errno());
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const std::string err = Errno();
      ::close(fd);
      OPREG_THROW(kRuntime, "FileStore: cannot lock ", path, ": ", err);
    }
  }
  std::string text = ReadAll(fd);
  int64_t v = text.empty() ? 0 : std::strtoll(text.c_str(), nullptr, 10);
  v += delta;
  const std::string out = std::to_string(v);
  ::lseek(fd, 0, SEEK_SET);
  if (::ftruncate(fd, 0) != 0) {
    const std::string err = Errno();
    ::close(fd);
    OPREG_THROW(kRuntime, "FileStore: cannot truncate ", path, ": ", err);
  }
  WriteAll(fd, out, path);
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return v;
}

void FileStore::Delete(std::string_view key) { ::unlink(PathOf(key).c_str()); }

}  // namespace opreg::symm_mem
