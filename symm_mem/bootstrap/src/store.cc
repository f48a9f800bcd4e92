// FileStore: one file per key; Set writes a temporary file and renames it over the key (atomic
// for readers), Get polls with exponential backoff (50 us .. 5 ms), Add holds an flock.
// Why every open goes through one directory fd with O_NOFOLLOW, O_NONBLOCK and an fstat check:
// the store directory often sits in /tmp, where another user can create the directory first or
// plant entries in it. A name that resolves to a symlink could redirect a truncating write
// (Add) to any file this user can write, a FIFO would block open() and read() past every
// timeout, and /dev/zero would be read forever. Opening relative to the directory fd also pins
// the directory checked at construction against a rename of its path.
#include "opreg/symm_mem/store.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "absl/strings/numbers.h"
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

// At most `limit` bytes of a regular file (its size was checked against the limit on open).
std::string ReadAll(int fd, int64_t limit, const std::string& path) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    OPREG_CHECK(static_cast<int64_t>(out.size()) <= limit, "FileStore: ", path, " grew past ",
                limit, " bytes while being read; refusing it");
  }
  return out;
}

std::string ModeText(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

const char* KindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

}  // namespace

std::chrono::steady_clock::time_point DeadlineAfter(Millis timeout) {
  const auto now = Clock::now();
  if (timeout <= Millis(0)) return now;
  const auto room = std::chrono::duration_cast<Millis>(Clock::time_point::max() - now);
  return timeout >= room ? Clock::time_point::max() : now + timeout;
}

void Store::Wait(const std::vector<std::string>& keys, Millis timeout) {
  const auto deadline = DeadlineAfter(timeout);
  for (const std::string& k : keys) {
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
    Get(k, std::max(left, Millis(0)));
  }
}

void Store::WaitRanks(std::string_view prefix, int world, int self, Millis timeout,
                      std::string_view what) {
  const auto deadline = DeadlineAfter(timeout);
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
  dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd_ < 0) {
    const int err = errno;
    struct stat st {};
    const bool is_link = ::lstat(dir_.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
    OPREG_THROW(kRuntime, "FileStore: cannot use ", dir_, ": ",
                is_link ? "it is a symbolic link (refused: another user may have planted it)"
                        : std::strerror(err));
  }
  struct stat st {};
  if (::fstat(dir_fd_, &st) != 0) {
    const std::string err = Errno();
    ::close(dir_fd_);
    OPREG_THROW(kRuntime, "FileStore: cannot stat ", dir_, ": ", err);
  }
  std::string why;
  if (st.st_uid != ::geteuid()) {
    why = StrCat("it belongs to uid ", st.st_uid, ", not to this user (uid ", ::geteuid(),
                 "): another user created it first and could read or replace the keys");
  } else if ((st.st_mode & 022) != 0) {
    why = StrCat("its mode ", ModeText(st.st_mode),
                 " lets group or others write in it, so they could plant or replace keys; "
                 "use a new path or chmod go-w it");
  }
  if (!why.empty()) {
    ::close(dir_fd_);
    OPREG_THROW(kRuntime, "FileStore: refusing the store directory ", dir_, ": ", why);
  }
}

FileStore::~FileStore() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::string FileStore::PrivateSocketDirectory() const {
  // The directory checked at construction may still be readable or searchable by others
  // (0755): sockets need one that nobody else can enter.
  struct stat st {};
  if (::fstat(dir_fd_, &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) return "";
  return dir_;
}

std::string FileStore::NameOf(std::string_view key) {
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
  return name;
}

std::string FileStore::PathOf(std::string_view key) const { return StrCat(dir_, "/", NameOf(key)); }

int FileStore::OpenChecked(std::string_view key, int flags) const {
  const std::string name = NameOf(key);
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
  const int fd = ::openat(dir_fd_, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) {
    if (errno == ENOENT && (flags & O_CREAT) == 0) return -1;
    const int err = errno;
    struct stat st {};
    if (err == ELOOP ||
        (::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))) {
      OPREG_THROW(kRuntime, "FileStore: refusing key '", key, "': ", PathOf(key),
                  " is a symbolic link (planted by someone else; the store never makes links)");
    }
    OPREG_THROW(kRuntime, "FileStore: cannot open ", PathOf(key), ": ", std::strerror(err));
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = StrCat("cannot stat it: ", Errno());
  } else if (!S_ISREG(st.st_mode)) {
    why = StrCat("it is ", KindOf(st.st_mode), ", not a regular file");
  } else if (st.st_uid != ::geteuid()) {
    why = StrCat("it belongs to uid ", st.st_uid, ", not to this user");
  } else if (st.st_size > kMaxValueBytes) {
    why = StrCat("it holds ", st.st_size, " bytes, more than a key may (", kMaxValueBytes, ")");
  }
  if (!why.empty()) {
    ::close(fd);
    OPREG_THROW(kRuntime, "FileStore: refusing key '", key, "' (", PathOf(key), "): ", why);
  }
  // Back to blocking I/O for a regular file (O_NONBLOCK has no effect on them anyway).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

void FileStore::Set(std::string_view key, std::string_view value) {
  OPREG_CHECK_VALUE(static_cast<int64_t>(value.size()) <= kMaxValueBytes, "FileStore: value of '",
                    key, "' has ", value.size(), " bytes, more than a key may (", kMaxValueBytes,
                    ")");
  static std::atomic<uint64_t> counter{0};
  const std::string name = NameOf(key);
  const std::string tmp = StrCat(".tmp.", ::getpid(), ".", counter.fetch_add(1));
  // O_EXCL: a name someone planted is an error, never a file we write into.
  int fd =
      ::openat(dir_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  OPREG_CHECK(fd >= 0, "FileStore: cannot create ", dir_, "/", tmp, ": ", Errno());
  try {
    WriteAll(fd, value, StrCat(dir_, "/", tmp));
  } catch (...) {
    ::close(fd);
    ::unlinkat(dir_fd_, tmp.c_str(), 0);
    throw;
  }
  ::close(fd);
  // rename replaces whatever entry has the key's name (a planted link included) without
  // following it.
  if (::renameat(dir_fd_, tmp.c_str(), dir_fd_, name.c_str()) != 0) {
    const std::string err = Errno();
    ::unlinkat(dir_fd_, tmp.c_str(), 0);
    OPREG_THROW(kRuntime, "FileStore: cannot rename ", tmp, " to ", PathOf(key), ": ", err);
  }
}

bool FileStore::TryGet(std::string_view key, std::string* value) {
  const int fd = OpenChecked(key, O_RDONLY);
  if (fd < 0) return false;
  try {
    *value = ReadAll(fd, kMaxValueBytes, PathOf(key));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return true;
}

std::string FileStore::Get(std::string_view key, Millis timeout) {
  const auto deadline = DeadlineAfter(timeout);
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
  const int fd = OpenChecked(key, O_RDWR | O_CREAT);
  // Polled, not a blocking flock: a process that holds the lock and never lets go (only this
  // user's can open the file) must cost a timeout, not a hang.
  const auto deadline = DeadlineAfter(lock_timeout_);
  std::chrono::microseconds delay(50);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EINTR) continue;
    if (error != EWOULDBLOCK || Clock::now() >= deadline) {
      const std::string err = Errno();
      ::close(fd);
      OPREG_THROW(kRuntime, "FileStore: cannot lock counter ", path,
                  error == EWOULDBLOCK
                      ? StrCat(": another process held the lock for ", lock_timeout_.count(),
                               " ms (timed out)")
                      : StrCat(": ", err));
    }
    Backoff(&delay);
  }
  int64_t v = 0;
  try {
    const std::string text = ReadAll(fd, kMaxValueBytes, path);
    if (!text.empty()) {
      OPREG_CHECK(absl::SimpleAtoi(text, &v), "FileStore: counter ", path,
                  " does not hold an integer: '", text.substr(0, 64), "'");
    }
    OPREG_CHECK(!__builtin_add_overflow(v, delta, &v), "FileStore: counter ", path,
                " would overflow adding ", delta);
    const std::string out = std::to_string(v);
    ::lseek(fd, 0, SEEK_SET);
    OPREG_CHECK(::ftruncate(fd, 0) == 0, "FileStore: cannot truncate ", path, ": ", Errno());
    WriteAll(fd, out, path);
  } catch (...) {
    ::close(fd);  // also releases the lock
    throw;
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return v;
}

void FileStore::Delete(std::string_view key) {
  // unlink removes a planted link itself, never its target.
  ::unlinkat(dir_fd_, NameOf(key).c_str(), 0);
}

}  // namespace opreg::symm_mem
