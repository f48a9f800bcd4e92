// All-to-all of one fd per rank over Unix seqpacket sockets, with the peers' credentials checked
// both ways (see fd_exchange.h for the protocol and the threat model in docs/security.md).
#include "opreg/symm_mem/fd_exchange.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"

namespace opreg::symm_mem {
namespace {

using Clock = std::chrono::steady_clock;

// "@name" is an abstract address, anything else a path.
sockaddr_un AddrOf(const std::string& address, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const size_t n = std::min(address.size(), sizeof(a.sun_path) - 1);
  std::memcpy(a.sun_path, address.data(), n);
  if (address[0] == '@') a.sun_path[0] = '\0';  // abstract namespace: no file, no permissions
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n + (address[0] == '@' ? 0 : 1));
  return a;
}

std::string Describe(const ucred& c) { return StrCat("pid ", c.pid, " uid ", c.uid); }

bool PeerCred(int sock, ucred* cred) {
  socklen_t len = sizeof(*cred);
  return ::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, cred, &len) == 0;
}

// Closes what it holds on every path out: the listener (and its socket file), open connections
// and, unless released, every received fd.
struct Resources {
  int listener = -1;
  std::string path;     // socket file to unlink ("" for an abstract address)
  std::string own_dir;  // the private directory this exchange made for its socket, or ""
  std::vector<int> conns;
  std::vector<int>* fds = nullptr;
  bool release = false;
  ~Resources() {
    if (listener >= 0) ::close(listener);
    if (!path.empty()) ::unlink(path.c_str());
    if (!own_dir.empty()) ::rmdir(own_dir.c_str());
    for (int c : conns) ::close(c);
    if (!release && fds != nullptr) {
      for (int& f : *fds) {
        if (f >= 0) ::close(f);
        f = -1;
      }
    }
  }
};

struct Peer {
  ucred cred{};
  std::string address;
};

// The identity a rank publishes: "pid uid address".
Peer ParsePeer(const std::string& who, int rank, const std::string& value) {
  std::vector<std::string> parts = absl::StrSplit(value, absl::MaxSplits(' ', 2));
  Peer p;
  int64_t pid = 0, uid = 0;
  OPREG_CHECK(parts.size() == 3 && absl::SimpleAtoi(parts[0], &pid) &&
                  absl::SimpleAtoi(parts[1], &uid) && !parts[2].empty(),
              "symm_mem: ", who, ": rank ", rank, " published a malformed identity '", value, "'");
  p.cred.pid = static_cast<pid_t>(pid);
  p.cred.uid = static_cast<uid_t>(uid);
  p.address = parts[2];
  return p;
}

bool SendFd(int sock, int32_t rank, int fd) {
  iovec iov{&rank, sizeof(rank)};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof(ctrl);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return ::sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof(rank));
}

// One message of a connection: its bytes and every fd it carried (closed by the caller).
struct Message {
  ssize_t bytes = -1;
  int32_t from = -1;
  std::vector<int> fds;
  bool truncated = false;
};

Message RecvMessage(int sock) {
  Message m;
  char data[64];
  iovec iov{data, sizeof(data)};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int) * 8)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof(ctrl);
  m.bytes = ::recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (m.bytes < 0) return m;
  m.truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < n; ++i) {
        int f = -1;
        std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        m.fds.push_back(f);
      }
    }
  }
  if (m.bytes == static_cast<ssize_t>(sizeof(m.from))) std::memcpy(&m.from, data, sizeof(m.from));
  return m;
}

// OPREG_SYMM_MEM_ABSTRACT_SOCKETS=1: the only way to get abstract socket names, which any
// local process can connect to (and fill the backlog of).
bool AbstractSocketsAllowed() {
  const char* v = std::getenv("OPREG_SYMM_MEM_ABSTRACT_SOCKETS");
  return v != nullptr && std::string(v) == "1";
}

// A new directory of mode 0700 for this rank's socket, under $TMPDIR or /tmp ("" on failure).
std::string MakePrivateDirectory() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = StrCat(base != nullptr && base[0] == '/' ? base : "/tmp", "/opreg-fdx-XXXXXX");
  if (::mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;  // mkdtemp makes it 0700, owned by this user
}

std::string RandomToken() {
  std::random_device rd;
  const uint64_t n = (uint64_t{rd()} << 32) ^ rd();
  return StrCat(absl::Hex(n, absl::kZeroPad16));
}

}  // namespace

std::vector<int> ExchangeFds(Store& store, const std::string& key_prefix, int rank, int world,
                             int fd, Millis timeout) {
  std::vector<int> fds(static_cast<size_t>(world), -1);
  if (world <= 1) return fds;
  const std::string who = StrCat("'", key_prefix, "' rank ", rank);
  const auto deadline = DeadlineAfter(timeout);
  const ucred self{::getpid(), ::geteuid(), ::getegid()};

  Resources res;
  res.fds = &fds;
  // The listener: a path inside a directory no other user can enter: the store's own when it is
  // private, else one made for this exchange. Abstract names (reachable by every local process,
  // which can fill their backlog) only when OPREG_SYMM_MEM_ABSTRACT_SOCKETS=1 asks for them.
  const std::string token = RandomToken();
  std::string address;
  constexpr size_t kMaxPath = sizeof(sockaddr_un{}.sun_path) - 1;
  std::string dir = store.PrivateSocketDirectory();
  if (dir.empty() || StrCat(dir, "/fdx-", token, "-", rank).size() > kMaxPath) {
    dir = MakePrivateDirectory();
    res.own_dir = dir;
  }
  const std::string path = StrCat(dir, "/fdx-", token, "-", rank);
  if (AbstractSocketsAllowed()) {
    address = StrCat("@opreg-symm-", token, "-", rank);
    Logger().warn(
        "symm_mem: {}: OPREG_SYMM_MEM_ABSTRACT_SOCKETS=1: listening on an abstract "
        "socket name, which any local process can connect to",
        who);
  } else {
    OPREG_CHECK(!dir.empty() && path.size() <= kMaxPath, "symm_mem: ", who,
                ": no private directory for the rendezvous socket (",
                dir.empty()
                    ? StrCat("cannot create one under $TMPDIR or /tmp: ", std::strerror(errno))
                    : StrCat(path, " is longer than a socket path may be"),
                "); set TMPDIR to a short writable path, or OPREG_SYMM_MEM_ABSTRACT_SOCKETS=1 to "
                "accept abstract names that other local users can reach");
    address = path;
  }
  res.listener = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  OPREG_CHECK(res.listener >= 0, "symm_mem: ", who, ": socket() failed: ", std::strerror(errno));
  socklen_t len = 0;
  const sockaddr_un addr = AddrOf(address, &len);
  OPREG_CHECK(::bind(res.listener, reinterpret_cast<const sockaddr*>(&addr), len) == 0,
              "symm_mem: ", who, ": cannot bind the rendezvous socket ", address, ": ",
              std::strerror(errno), errno == EADDRINUSE ? " (another process holds the name)" : "");
  if (address[0] != '@') res.path = address;
  OPREG_CHECK(::listen(res.listener, world + 16) == 0, "symm_mem: ", who,
              ": listen() failed: ", std::strerror(errno));

  // Publish who we are only once the socket listens, then learn every peer.
  const std::string peer_prefix = StrCat(key_prefix, "/peer/");
  store.Set(StrCat(peer_prefix, rank), StrCat(self.pid, " ", self.uid, " ", address));
  store.WaitRanks(peer_prefix, world, rank, timeout, StrCat("symm_mem fd exchange ", who));
  std::vector<Peer> peers(static_cast<size_t>(world));
  for (int p = 0; p < world; ++p) {
    if (p == rank) continue;
    peers[p] = ParsePeer(who, p, store.Get(StrCat(peer_prefix, p), timeout));
    OPREG_CHECK(peers[p].cred.uid == self.uid, "symm_mem: ", who, ": rank ", p, " runs as uid ",
                peers[p].cred.uid, ", this rank as uid ", self.uid,
                "; a group's ranks must run as one user");
  }

  // One loop sends and receives until both are done or the deadline passes. Connecting never
  // blocks (a peer's full backlog is EAGAIN, tried again on the next turn), and every turn also
  // accepts: a rank busy sending still drains its own backlog, so connections that others queue
  // on it (a flood included) cannot stall the group past its timeout.
  // A flood must not flood the log too: the first few refusals are logged, the rest counted.
  std::vector<std::string> refused;
  int refusals = 0;
  auto refuse = [&](std::string why) {
    if (++refusals <= 3) Logger().warn("symm_mem: {}: fd exchange refused {}", who, why);
    if (refused.size() < 3) refused.push_back(std::move(why));
  };
  std::vector<bool> sent(static_cast<size_t>(world), false);
  sent[rank] = true;
  std::vector<int> connect_errno(static_cast<size_t>(world), 0);
  int to_send = world - 1;
  // Sends our fd to peer p if its socket takes a connection now; false to try again later.
  auto try_send = [&](int p) {
    const int c = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    OPREG_CHECK(c >= 0, "symm_mem: ", who, ": socket() failed: ", std::strerror(errno));
    socklen_t plen = 0;
    const sockaddr_un paddr = AddrOf(peers[p].address, &plen);
    if (::connect(c, reinterpret_cast<const sockaddr*>(&paddr), plen) != 0) {
      const int err = errno;
      ::close(c);
      OPREG_CHECK(err == EAGAIN || err == EINTR || err == ECONNREFUSED || err == ENOENT,
                  "symm_mem: ", who, ": cannot connect to rank ", p, " at ", peers[p].address, ": ",
                  std::strerror(err));
      connect_errno[p] = err;
      return false;
    }
    res.conns.push_back(c);  // stays open until we return, so the message is not lost
    ucred owner{};
    OPREG_CHECK(PeerCred(c, &owner), "symm_mem: ", who,
                ": SO_PEERCRED failed: ", std::strerror(errno));
    OPREG_CHECK(owner.pid == peers[p].cred.pid && owner.uid == peers[p].cred.uid, "symm_mem: ", who,
                ": refusing to send this rank's fd: the socket of rank ", p, " (", peers[p].address,
                ") belongs to ", Describe(owner), ", but rank ", p, " published ",
                Describe(peers[p].cred));
    // A fresh seqpacket connection has room for one small message: this does not block.
    OPREG_CHECK(SendFd(c, rank, fd), "symm_mem: ", who, ": sendmsg(SCM_RIGHTS) to rank ", p,
                " failed: ", std::strerror(errno));
    return true;
  };
  std::vector<std::pair<int, int>> open;  // (connection, expected rank)
  int received = 0;
  while (received < world - 1 || to_send > 0) {
    for (int p = 0; p < world && to_send > 0; ++p) {
      if (!sent[p] && try_send(p)) {
        sent[p] = true;
        --to_send;
      }
    }
    for (;;) {
      const int c = ::accept4(res.listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c < 0) break;
      ucred cred{};
      int from = -1;
      if (PeerCred(c, &cred)) {
        for (int p = 0; p < world; ++p) {
          if (p != rank && peers[p].cred.pid == cred.pid && peers[p].cred.uid == cred.uid) from = p;
        }
      }
      if (from < 0 || fds[from] >= 0) {
        refuse(StrCat("a connection from ", Describe(cred),
                      from < 0 ? " (not a rank of this group)" : " (a second one from that rank)"));
        ::close(c);
        continue;
      }
      open.emplace_back(c, from);
    }
    for (auto it = open.begin(); it != open.end();) {
      Message m = RecvMessage(it->first);
      if (m.bytes < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        ++it;
        continue;
      }
      const int from = it->second;
      const bool ok = m.bytes == static_cast<ssize_t>(sizeof(int32_t)) && !m.truncated &&
                      m.from == from && m.fds.size() == 1;
      if (ok) {
        fds[from] = m.fds[0];
        ++received;
      } else {
        for (int f : m.fds) ::close(f);
        refuse(StrCat("a malformed message from rank ", from, " (", Describe(peers[from].cred),
                      ", ", m.bytes, " bytes, ", m.fds.size(), " fds)"));
      }
      ::close(it->first);
      it = open.erase(it);
    }
    if (received == world - 1 && to_send == 0) break;
    if (Clock::now() >= deadline) {
      std::string missing, unsent;
      for (int p = 0; p < world; ++p) {
        if (p != rank && fds[p] < 0) StrAppend(&missing, missing.empty() ? "" : ", ", p);
        if (!sent[p]) {
          StrAppend(&unsent, unsent.empty() ? "" : ", ", p, " (", peers[p].address, ": ",
                    std::strerror(connect_errno[p]), ")");
        }
      }
      std::string why;
      for (const std::string& r : refused) StrAppend(&why, why.empty() ? "" : "; ", r);
      for (const auto& [c, p] : open) ::close(c);
      OPREG_THROW(kRuntime, "symm_mem: ", who, ": timed out after ", timeout.count(),
                  " ms exchanging fds",
                  missing.empty() ? "" : StrCat("; no fd from rank(s) ", missing),
                  unsent.empty() ? "" : StrCat("; could not connect to rank(s) ", unsent),
                  why.empty() ? "" : StrCat("; refused ", refusals, ": ", why));
    }
    std::vector<pollfd> pfds{{res.listener, POLLIN, 0}};
    for (const auto& [c, p] : open) pfds.push_back({c, POLLIN, 0});
    // While sends are pending, wake up soon to retry them; else sleep until something arrives.
    ::poll(pfds.data(), pfds.size(), to_send > 0 ? 1 : 5);
  }
  if (refusals > 3) {
    Logger().warn("symm_mem: {}: fd exchange refused {} connections or messages in all", who,
                  refusals);
  }
  // Every peer has read our identity (it connected to us), so nobody needs the key any more.
  store.Delete(StrCat(peer_prefix, rank));
  res.release = true;
  return fds;
}

}  // namespace opreg::symm_mem
