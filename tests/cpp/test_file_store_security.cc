// FileStore against another user of the machine and against planted entries: a store directory
// someone else created or opened up, symbolic links, FIFOs, devices and oversized files at key
// names, another user's key file, and timeouts too large for the clock. Each must end in an
// error that says what was refused, at once, with no file outside the store written. Cases
// that need a second user run the setup as root and chown to uid 65534 (nobody); without root
// they say they were skipped.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "opreg/core/error.h"
#include "opreg/symm_mem/store.h"

namespace sm = opreg::symm_mem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uid_t kNobody = 65534;

std::string TempDir() {
  char tmpl[] = "/tmp/opreg_store_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs fn, which must throw opreg::Error containing `text`, and returns how long it took.
template <class Fn>
std::chrono::milliseconds RequireRefused(Fn&& fn, const std::string& text) {
  const auto start = Clock::now();
  try {
    fn();
  } catch (const opreg::Error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(text) != std::string::npos);
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  }
  FAIL("not refused; expected an error containing: " << text);
  return {};
}

}  // namespace

TEST_CASE("a store directory others can write, or that is a link, is refused",
          "[symm_mem][security]") {
  const std::string base = TempDir();
  const std::string open_dir = base + "/open";
  REQUIRE(mkdir(open_dir.c_str(), 0700) == 0);
  REQUIRE(chmod(open_dir.c_str(), 0777) == 0);
  RequireRefused([&] { sm::FileStore s(open_dir); }, "lets group or others write in it");
  REQUIRE(chmod(open_dir.c_str(), 0755) == 0);  // readable by others, writable by us only: fine
  { sm::FileStore s(open_dir); }
  const std::string link = base + "/link";
  REQUIRE(symlink(open_dir.c_str(), link.c_str()) == 0);
  RequireRefused([&] { sm::FileStore s(link); }, "is a symbolic link");
  std::filesystem::remove_all(base);
}

TEST_CASE("a store directory another user created first is refused", "[symm_mem][security]") {
  if (geteuid() != 0) {
    WARN("SKIPPED: needs root to make a directory owned by another user");
    return;
  }
  const std::string base = TempDir();
  const std::string squatted = base + "/store";
  REQUIRE(mkdir(squatted.c_str(), 0700) == 0);
  REQUIRE(chown(squatted.c_str(), kNobody, kNobody) == 0);
  RequireRefused([&] { sm::FileStore s(squatted); }, "belongs to uid 65534, not to this user");
  std::filesystem::remove_all(base);
}

TEST_CASE("planted links, FIFOs, devices and huge files at key names are refused at once",
          "[symm_mem][security]") {
  const std::string base = TempDir();
  const std::string dir = base + "/store";
  sm::FileStore store(dir);
  // A victim file outside the store that a truncating write through a link would destroy.
  const std::string victim = base + "/victim";
  { std::ofstream(victim) << "precious"; }
  REQUIRE(symlink(victim.c_str(), store.PathOf("tp/teardown").c_str()) == 0);
  RequireRefused([&] { store.Add("tp/teardown", 1); }, "is a symbolic link");
  RequireRefused([&] { store.Get("tp/teardown", std::chrono::seconds(1)); }, "is a symbolic link");
  CHECK(ReadFile(victim) == "precious");  // nothing outside the store written
  store.Delete("tp/teardown");            // removes the link, not its target
  CHECK(ReadFile(victim) == "precious");
  store.Set("tp/teardown", "4");  // a real key may take the name now
  CHECK(store.Add("tp/teardown", 1) == 5);

  // A FIFO would block open() for reading until a writer came: refused without waiting.
  REQUIRE(mkfifo(store.PathOf("fifo").c_str(), 0600) == 0);
  CHECK(RequireRefused([&] { store.Get("fifo", std::chrono::seconds(30)); }, "is a FIFO") <
        std::chrono::seconds(5));
  CHECK(RequireRefused([&] { store.Add("fifo", 1); }, "is a FIFO") < std::chrono::seconds(5));

  // A link to /dev/zero would be read forever.
  REQUIRE(symlink("/dev/zero", store.PathOf("zero").c_str()) == 0);
  RequireRefused([&] { store.Get("zero", std::chrono::seconds(1)); }, "is a symbolic link");

  // A file larger than any value: refused, not read.
  {
    const int fd = open(store.PathOf("big").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, sm::FileStore::kMaxValueBytes + 1) == 0);
    close(fd);
  }
  RequireRefused([&] { store.Get("big", std::chrono::seconds(1)); }, "more than a key may");

  // A counter that does not hold a number is an error, not 0.
  store.Set("counter", "twelve");
  RequireRefused([&] { store.Add("counter", 1); }, "does not hold an integer");
  std::filesystem::remove_all(base);
}

TEST_CASE("a key file of another user is refused", "[symm_mem][security]") {
  if (geteuid() != 0) {
    WARN("SKIPPED: needs root to make a file owned by another user");
    return;
  }
  const std::string base = TempDir();
  sm::FileStore store(base + "/store");
  store.Set("rank/1", "forged");
  REQUIRE(chown(store.PathOf("rank/1").c_str(), kNobody, kNobody) == 0);
  RequireRefused([&] { store.Get("rank/1", std::chrono::seconds(1)); },
                 "belongs to uid 65534, not to this user");
  std::filesystem::remove_all(base);
}

TEST_CASE("timeouts too large for the clock wait instead of expiring at once",
          "[symm_mem][security]") {
  const auto now = Clock::now();
  CHECK(sm::DeadlineAfter(sm::Millis::max()) == Clock::time_point::max());
  CHECK(sm::DeadlineAfter(std::chrono::hours(24 * 365 * 1000)) > now + std::chrono::hours(24));
  const auto past = sm::DeadlineAfter(sm::Millis(-5));
  CHECK(past <= Clock::now());
  const std::string base = TempDir();
  sm::FileStore store(base + "/store");
  store.Set("k", "v");
  CHECK(store.Get("k", sm::Millis::max()) == "v");
  std::filesystem::remove_all(base);
}

TEST_CASE("a counter lock held by a stuck process costs the lock timeout, not a hang",
          "[symm_mem][security]") {
  const std::string base = TempDir();
  sm::FileStore store(base + "/store");
  CHECK(store.Add("n", 1) == 1);
  // Another open file description of the counter, locked and never released (as by a process
  // that stopped inside Add): flock locks conflict between descriptions even in one process.
  const int held = ::open(store.PathOf("n").c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);
  store.set_lock_timeout(sm::Millis(200));
  RequireRefused([&] { store.Add("n", 1); }, "another process held the lock for 200 ms");
  ::flock(held, LOCK_UN);
  CHECK(store.Add("n", 1) == 2);  // the counter was not touched by the refused call
  ::close(held);
  std::filesystem::remove_all(base);
}
