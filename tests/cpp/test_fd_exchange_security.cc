// The fd exchange against a real intruder process: an injected fd claiming to be a rank, a
// process re-binding a rank's published socket name, and a flood of malformed messages. The
// intruder is forked and, when the tests run as root, drops to uid/gid 65534 (nobody) like
// another user's job on the node would be. Each case must end with the real ranks holding each
// other's memory (checked by content) or with a clear error, no fd reaching the intruder, and no
// hang (every process has a watchdog).
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fork_ranks.h"
#include "opreg/core/error.h"
#include "opreg/symm_mem/fd_exchange.h"
#include "opreg/symm_mem/store.h"

namespace sm = opreg::symm_mem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uid_t kNobody = 65534;

// What the intruder saw, sent back through a pipe.
struct IntruderReport {
  int attempts = 0;      // connections it made / messages it sent
  int fds_received = 0;  // fds that reached it (must stay 0)
  int bind_errno = 0;    // errno of its bind (squatting case)
};

// A store directory with the given mode (0700: private; 0755: the exchange must fall back to
// abstract names and credential checks, like an MPI store).
std::string StoreDir(mode_t mode) {
  char tmpl[] = "/tmp/opreg_fdx_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  REQUIRE(chmod(tmpl, mode) == 0);
  return tmpl;
}

void DropPrivileges() {
  if (geteuid() != 0) return;  // not root: the intruder is another process of the same user
  if (setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(90);
}

int MemfdWith(const std::string& text) {
  const int fd = memfd_create("opreg_fdx_test", MFD_CLOEXEC);
  if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return -1;
  return fd;
}

std::string ContentOf(int fd) {
  char buf[64] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// The abstract opreg rendezvous names listed in /proc/net/unix ("@opreg-symm-...").
std::vector<std::string> ListedNames() {
  std::vector<std::string> names;
  std::ifstream in("/proc/net/unix");
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find("@opreg-symm-");
    if (at != std::string::npos) names.push_back(line.substr(at));
  }
  return names;
}

sockaddr_un Abstract(const std::string& at_name, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, at_name.data(), at_name.size());
  a.sun_path[0] = '\0';
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + at_name.size());
  return a;
}

// Sends `bytes` of payload and the given fds over a fresh connection to `name`.
bool Inject(const std::string& name, const void* payload, size_t bytes,
            const std::vector<int>& fds) {
  const int c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  socklen_t len = 0;
  const sockaddr_un a = Abstract(name, &len);
  if (c < 0 || connect(c, reinterpret_cast<const sockaddr*>(&a), len) != 0) {
    if (c >= 0) close(c);
    return false;
  }
  iovec iov{const_cast<void*>(payload), bytes};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = ctrl;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cm), fds.data(), sizeof(int) * fds.size());
  }
  const bool ok = sendmsg(c, &msg, MSG_NOSIGNAL) >= 0;
  close(c);
  return ok;
}

// Forks the intruder: it runs body(report) for at most `seconds`, then writes its report.
struct Intruder {
  pid_t pid = -1;
  int read_fd = -1;

  template <class Body>
  static Intruder Start(Body body) {
    int p[2];
    REQUIRE(pipe(p) == 0);
    std::fflush(nullptr);
    Intruder in;
    in.pid = fork();
    REQUIRE(in.pid >= 0);
    if (in.pid == 0) {
      close(p[0]);
      alarm(20);  // never outlives the test
      DropPrivileges();
      IntruderReport r;
      body(r);
      (void)!write(p[1], &r, sizeof(r));
      _exit(0);
    }
    close(p[1]);
    in.read_fd = p[0];
    return in;
  }

  IntruderReport Finish() {
    IntruderReport r;
    pollfd pfd{read_fd, POLLIN, 0};
    REQUIRE(poll(&pfd, 1, 20000) == 1);
    REQUIRE(read(read_fd, &r, sizeof(r)) == static_cast<ssize_t>(sizeof(r)));
    close(read_fd);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return r;
  }
};

// A W=2 exchange of memfds holding "rank r"; each rank checks it holds the other's content.
// Rank 1 starts `rank1_delay` late, which keeps rank 0's socket waiting for the intruder. With
// `abstract`, the ranks opt in to abstract socket names (OPREG_SYMM_MEM_ABSTRACT_SOCKETS=1),
// which any local process can reach: the credential checks must hold there too.
int RealRank(int r, const std::string& dir, std::chrono::milliseconds rank1_delay,
             bool abstract = true) {
  if (abstract) setenv("OPREG_SYMM_MEM_ABSTRACT_SOCKETS", "1", 1);
  if (r == 1) std::this_thread::sleep_for(rank1_delay);
  sm::FileStore store(dir);
  const int mine = MemfdWith("rank " + std::to_string(r));
  OPREG_CHILD_CHECK(mine >= 0);
  std::vector<int> fds = sm::ExchangeFds(store, "fdx", r, 2, mine, std::chrono::seconds(8));
  OPREG_CHILD_CHECK(fds[1 - r] >= 0);
  OPREG_CHILD_CHECK(ContentOf(fds[1 - r]) == "rank " + std::to_string(1 - r));
  return 0;
}

}  // namespace

TEST_CASE("an fd injected by another process claiming to be a rank is refused",
          "[symm_mem][security]") {
  const std::string dir = StoreDir(0755);  // abstract names opted in: credentials checks only
  Intruder intruder = Intruder::Start([](IntruderReport& r) {
    const int fake = MemfdWith("intruder memory");
    const auto end = Clock::now() + std::chrono::seconds(3);
    while (Clock::now() < end) {
      for (const std::string& name : ListedNames()) {
        for (int32_t claim : {0, 1}) {  // claims to be either rank
          r.attempts += Inject(name, &claim, sizeof(claim), {fake}) ? 1 : 0;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  const std::vector<int> codes = opreg_test::ForkRanks(
      2, [&](int r) { return RealRank(r, dir, std::chrono::milliseconds(600)); }, 30);
  const IntruderReport report = intruder.Finish();
  INFO("intruder: " << report.attempts << " injections");
  CHECK(report.attempts > 0);  // it did reach a rank's socket during the exchange
  CHECK(report.fds_received == 0);
  CHECK(codes == std::vector<int>{0, 0});  // both ranks hold each other's memory
  std::filesystem::remove_all(dir);
}

TEST_CASE("a rank's fd is never delivered to a process that re-binds its published name",
          "[symm_mem][security]") {
  const std::string dir = StoreDir(0755);
  const std::string name = "@opreg-symm-squatted-1";
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  // The intruder holds the name and accepts whatever comes, counting the fds it gets.
  Intruder intruder = Intruder::Start([&](IntruderReport& r) {
    close(ready[0]);
    const int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    socklen_t len = 0;
    const sockaddr_un a = Abstract(name, &len);
    if (bind(s, reinterpret_cast<const sockaddr*>(&a), len) != 0 || listen(s, 16) != 0) {
      r.bind_errno = errno;
    }
    (void)!write(ready[1], "x", 1);
    const auto end = Clock::now() + std::chrono::seconds(3);
    while (Clock::now() < end) {
      pollfd pfd{s, POLLIN, 0};
      if (poll(&pfd, 1, 10) != 1) continue;
      const int c = accept(s, nullptr, nullptr);
      if (c < 0) continue;
      ++r.attempts;
      char buf[16];
      alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int) * 4)] = {};
      iovec iov{buf, sizeof(buf)};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = ctrl;
      msg.msg_controllen = sizeof(ctrl);
      pollfd cp{c, POLLIN, 0};
      if (poll(&cp, 1, 500) == 1 && recvmsg(c, &msg, 0) >= 0) {
        for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
          if (cm->cmsg_type == SCM_RIGHTS) ++r.fds_received;
        }
      }
      close(c);
    }
  });
  close(ready[1]);
  char x;
  REQUIRE(read(ready[0], &x, 1) == 1);
  close(ready[0]);
  // Rank 1 published its identity and name, then its socket went away (it crashed); the
  // intruder now holds that name. Rank 0 must refuse to hand its fd over.
  sm::FileStore store(dir);
  store.Set("fdx/peer/1", std::to_string(getpid()) + " " + std::to_string(geteuid()) + " " + name);
  const std::vector<int> codes = opreg_test::ForkRanks(
      1,
      [&](int) {
        const int mine = MemfdWith("rank 0");
        try {
          sm::ExchangeFds(store, "fdx", 0, 2, mine, std::chrono::seconds(5));
        } catch (const opreg::Error& e) {
          const std::string what = e.what();
          std::fprintf(stderr, "rank 0: %s\n", what.c_str());
          OPREG_CHILD_CHECK(what.find("refusing to send this rank's fd") != std::string::npos);
          OPREG_CHILD_CHECK(what.find("belongs to pid") != std::string::npos);
          return 0;
        }
        return 1;  // the exchange must not complete
      },
      30);
  const IntruderReport report = intruder.Finish();
  REQUIRE(report.bind_errno == 0);
  CHECK(report.attempts == 1);  // rank 0 connected, saw the owner and left
  CHECK(report.fds_received == 0);
  CHECK(codes == std::vector<int>{0});
  std::filesystem::remove_all(dir);
}

TEST_CASE("with a private store directory other users cannot reach the sockets",
          "[symm_mem][security]") {
  if (geteuid() != 0) {
    WARN("SKIPPED: needs root to run the intruder as another user");
    return;
  }
  const std::string dir = StoreDir(0700);
  Intruder intruder = Intruder::Start([&](IntruderReport& r) {
    const int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = dir + "/fdx-squat-1";
    std::memcpy(a.sun_path, path.c_str(), path.size());
    if (bind(s, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0) r.bind_errno = errno;
  });
  const IntruderReport report = intruder.Finish();
  CHECK(report.bind_errno == EACCES);
  const std::vector<int> codes = opreg_test::ForkRanks(
      2, [&](int r) { return RealRank(r, dir, std::chrono::milliseconds(0), false); }, 30);
  CHECK(codes == std::vector<int>{0, 0});
  std::filesystem::remove_all(dir);
}

TEST_CASE("by default no rank listens on an abstract name, whatever the store directory",
          "[symm_mem][security]") {
  // A store directory others can enter (0755) is no place for sockets: the exchange makes its
  // own 0700 directory instead of falling back to abstract names, so an intruder scanning
  // /proc/net/unix finds nothing to connect to.
  const std::string dir = StoreDir(0755);
  Intruder intruder = Intruder::Start([](IntruderReport& r) {
    const auto end = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < end) {
      r.attempts += static_cast<int>(ListedNames().size());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const std::vector<int> codes = opreg_test::ForkRanks(
      2, [&](int r) { return RealRank(r, dir, std::chrono::milliseconds(600), false); }, 30);
  const IntruderReport report = intruder.Finish();
  CHECK(report.attempts == 0);  // no abstract opreg name was ever listed
  CHECK(codes == std::vector<int>{0, 0});
  std::filesystem::remove_all(dir);
}

TEST_CASE("a backlog flood on the ranks' sockets does not hang the exchange",
          "[symm_mem][security]") {
  // The attack of issue 34: fill each listed rank's backlog with connections that never send,
  // so that a rank blocked in connect() never reaches its accept loop. Ranks now connect without
  // blocking and accept while they send, so each drains its own backlog: the exchange completes
  // well inside its 8 s timeout (ForkRanks' 30 s watchdog would report a hang).
  const std::string dir = StoreDir(0755);
  Intruder intruder = Intruder::Start([](IntruderReport& r) {
    std::vector<int> held;
    const auto end = Clock::now() + std::chrono::seconds(4);
    while (Clock::now() < end) {
      for (const std::string& name : ListedNames()) {
        const int c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        socklen_t len = 0;
        const sockaddr_un a = Abstract(name, &len);
        if (c >= 0 && connect(c, reinterpret_cast<const sockaddr*>(&a), len) == 0) {
          ++r.attempts;
          held.push_back(c);  // kept open: it occupies the backlog until accepted
        } else if (c >= 0) {
          close(c);
        }
      }
    }
    for (int c : held) close(c);
  });
  const auto start = Clock::now();
  const std::vector<int> codes = opreg_test::ForkRanks(
      2, [&](int r) { return RealRank(r, dir, std::chrono::milliseconds(600), true); }, 30);
  const auto took = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start);
  const IntruderReport report = intruder.Finish();
  INFO("intruder: " << report.attempts << " connections queued; exchange took " << took.count()
                    << " s");
  CHECK(report.attempts > 0);
  CHECK(codes == std::vector<int>{0, 0});
  std::filesystem::remove_all(dir);
}

TEST_CASE("a flood of malformed messages does not stop the exchange", "[symm_mem][security]") {
  const std::string dir = StoreDir(0755);
  Intruder intruder = Intruder::Start([](IntruderReport& r) {
    const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    const char garbage[40] = "not a rank id, and too long for one";
    const int32_t bad_rank = 7;
    const auto end = Clock::now() + std::chrono::seconds(3);
    while (Clock::now() < end) {
      for (const std::string& name : ListedNames()) {
        r.attempts += Inject(name, garbage, sizeof(garbage), {devnull, devnull}) ? 1 : 0;
        r.attempts += Inject(name, &bad_rank, sizeof(bad_rank), {}) ? 1 : 0;
        r.attempts += Inject(name, garbage, 1, {devnull}) ? 1 : 0;
      }
    }
  });
  const std::vector<int> codes = opreg_test::ForkRanks(
      2, [&](int r) { return RealRank(r, dir, std::chrono::milliseconds(600)); }, 30);
  const IntruderReport report = intruder.Finish();
  INFO("intruder: " << report.attempts << " malformed messages");
  CHECK(report.attempts > 0);
  CHECK(codes == std::vector<int>{0, 0});
  std::filesystem::remove_all(dir);
}
