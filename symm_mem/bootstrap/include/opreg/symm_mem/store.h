// Key-value stores that bootstrap symmetric-memory groups.
//
// A Store is shared by the ranks of a job: Set publishes bytes under a key, Get waits (with a
// timeout) until a key exists, Add is an atomic counter. FileStore keeps one file per key in a
// directory on a file system every rank sees (one machine: any local directory).
//
// Errors: opreg::Error. A wait that times out throws kRuntime naming the key (and, through
// WaitRanks, the ranks that did not arrive); I/O failures throw kRuntime with errno's text.
// FileStore refuses (kRuntime, saying why) a directory that is not a directory, is a symbolic
// link, is owned by another user or is writable by group or others, and any key file that is
// not a regular file of this user (a planted symlink, FIFO, device or another user's file).
//
// Thread safety: a FileStore may be used from several threads and processes at once (Set is an
// atomic rename, Add holds an flock on the counter file, waiting for it at most its lock
// timeout); set_lock_timeout is not synchronised with concurrent calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opreg::symm_mem {

using Millis = std::chrono::milliseconds;

// now + timeout on the steady clock, saturating at its end (a timeout of years, or
// Millis::max(), means "no deadline" rather than overflowing into the past).
std::chrono::steady_clock::time_point DeadlineAfter(Millis timeout);

class Store {
 public:
  virtual ~Store() = default;
  // Publishes `value` under `key` (overwrites; readers never see a partial value).
  virtual void Set(std::string_view key, std::string_view value) = 0;
  // The value of `key`, waiting up to `timeout` for it to appear.
  virtual std::string Get(std::string_view key, Millis timeout) = 0;
  // The value of `key` if it exists now.
  virtual bool TryGet(std::string_view key, std::string* value) = 0;
  // Adds `delta` to the integer counter `key` (created as 0) and returns the new value.
  virtual int64_t Add(std::string_view key, int64_t delta) = 0;
  // Removes `key` (no error when absent).
  virtual void Delete(std::string_view key) = 0;
  // A directory that only this process's user can enter, where the fd exchange may put its
  // sockets (so no other user can reach them), or "" when the store has none (the exchange then
  // makes a private directory of its own).
  virtual std::string PrivateSocketDirectory() const { return ""; }
  // Waits until every key exists.
  void Wait(const std::vector<std::string>& keys, Millis timeout);
  // Waits for `prefix + std::to_string(r)` for every r in [0, world) except `self` and names the
  // ranks still missing when it times out: "... rank(s) 1, 3 did not arrive".
  void WaitRanks(std::string_view prefix, int world, int self, Millis timeout,
                 std::string_view what);
};

// One file per key in `dir` (created if missing, with mode 0700; an existing one must be this
// user's and closed to writes by others, see Errors above). Keys may hold any characters; they
// are escaped into file names. Every file is opened relative to the directory opened once at
// construction, without following symbolic links, and checked to be a regular file of this
// user before it is read or written, so another user cannot redirect a write or stall a read.
// The store never removes the directory itself.
class FileStore : public Store {
 public:
  explicit FileStore(std::string dir);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;
  void Set(std::string_view key, std::string_view value) override;
  std::string Get(std::string_view key, Millis timeout) override;
  bool TryGet(std::string_view key, std::string* value) override;
  int64_t Add(std::string_view key, int64_t delta) override;
  void Delete(std::string_view key) override;
  // dir() when it is owned by this user and closed to everyone else (mode 0700 or stricter).
  std::string PrivateSocketDirectory() const override;
  const std::string& dir() const { return dir_; }
  // How long Add waits for the counter's lock (held for microseconds by a live rank) before it
  // throws kRuntime saying another process holds it. 30 s by default.
  void set_lock_timeout(Millis timeout) { lock_timeout_ = timeout; }
  // The path of the file holding `key`.
  std::string PathOf(std::string_view key) const;
  // The largest value a key may hold (a larger file is refused, not read).
  static constexpr int64_t kMaxValueBytes = int64_t{64} << 20;

 private:
  // The file name of `key` inside the directory.
  static std::string NameOf(std::string_view key);
  // Opens `key`'s file with `flags` (O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK added) and checks that
  // it is a regular file of this user; -1 with errno ENOENT when absent and not created.
  int OpenChecked(std::string_view key, int flags) const;

  std::string dir_;
  int dir_fd_ = -1;  // the directory, opened once (O_DIRECTORY | O_NOFOLLOW)
  Millis lock_timeout_{30000};
};

}  // namespace opreg::symm_mem
