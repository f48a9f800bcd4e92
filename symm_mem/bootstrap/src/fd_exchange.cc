// SCM_RIGHTS all-to-all of one fd per rank (see fd_exchange.h).
#include "opreg/symm_mem/fd_exchange.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <random>

#include "opreg/core/error.h"

namespace opreg::symm_mem {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_un AbstractAddr(const std::string& name, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const size_t n = std::min(name.size(), sizeof(a.sun_path) - 1);
  std::memcpy(a.sun_path + 1, name.data(), n);  // sun_path[0] == '\0': abstract namespace
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return a;
}

// Closes the socket and, unless released, every received fd.
struct Cleanup {
  int sock = -1;
  std::vector<int>* fds = nullptr;
  bool release = false;
  ~Cleanup() {
    if (sock >= 0) ::close(sock);
    if (!release && fds != nullptr) {
      for (int& f : *fds) {
        if (f >= 0) ::close(f);
        f = -1;
      }
    }
  }
};

bool SendFd(int sock, const std::string& peer_name, int32_t rank, int fd) {
  socklen_t len = 0;
  sockaddr_un peer = AbstractAddr(peer_name, &len);
  iovec iov{&rank, sizeof(rank)};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_name = &peer;
  msg.msg_namelen = len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof(ctrl);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return ::sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0;
}

// Receives one message: true with (*from, *fd) set, false when none is pending.
bool RecvFd(int sock, int32_t* from, int* fd, ssize_t* bytes) {
  iovec iov{from, sizeof(*from)};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof(ctrl);
  *bytes = ::recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (*bytes < 0) return false;
  *fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      std::memcpy(fd, CMSG_DATA(c), sizeof(int));
    }
  }
  return true;
}

}  // namespace

std::vector<int> ExchangeFds(Store& store, const std::string& key_prefix, int rank, int world,
                             int fd, Millis timeout) {
  std::vector<int> fds(static_cast<size_t>(world), -1);
  if (world <= 1) return fds;
  const std::string who = StrCat("'", key_prefix, "' rank ", rank);
  const auto deadline = Clock::now() + timeout;

  std::string nonce;
  if (rank == 0) {
    std::random_device rd;
    const uint64_t n = (uint64_t{rd()} << 32) ^ rd() ^ static_cast<uint64_t>(::getpid());
    nonce = StrCat(absl::Hex(n));
    store.Set(StrCat(key_prefix, "/nonce"), nonce);
  } else {
    nonce = store.Get(StrCat(key_prefix, "/nonce"), timeout);
  }
  auto sock_name = [&](int r) { return StrCat("opreg-symm-cuda-", nonce, "-", r); };

  Cleanup cleanup;
  cleanup.fds = &fds;
  cleanup.sock = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  OPREG_CHECK(cleanup.sock >= 0, "symm_mem: ", who, ": socket() failed: ", std::strerror(errno));
  socklen_t len = 0;
  sockaddr_un self = AbstractAddr(sock_name(rank), &len);
  OPREG_CHECK(::bind(cleanup.sock, reinterpret_cast<sockaddr*>(&self), len) == 0, "symm_mem: ", who,
              ": bind() failed: ", std::strerror(errno));
  store.Set(StrCat(key_prefix, "/ready/", rank), "1");
  store.WaitRanks(StrCat(key_prefix, "/ready/"), world, rank, timeout,
                  StrCat("symm_mem fd exchange ", who));

  std::vector<int> pending;
  for (int p = 0; p < world; ++p) {
    if (p != rank) pending.push_back(p);
  }
  int received = 0;
  while (!pending.empty() || received < world - 1) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      if (SendFd(cleanup.sock, sock_name(*it), rank, fd)) {
        it = pending.erase(it);
        progress = true;
        continue;
      }
      OPREG_CHECK(
          errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNREFUSED,
          "symm_mem: ", who, ": sendmsg(SCM_RIGHTS) to rank ", *it,
          " failed: ", std::strerror(errno));
      ++it;
    }
    int32_t from = -1;
    int got = -1;
    ssize_t bytes = 0;
    while (RecvFd(cleanup.sock, &from, &got, &bytes)) {
      if (bytes != sizeof(from) || from < 0 || from >= world || from == rank ||
          fds[static_cast<size_t>(from)] >= 0 || got < 0) {
        if (got >= 0) ::close(got);
        OPREG_THROW(kRuntime, "symm_mem: ", who, ": unexpected message during the fd exchange");
      }
      fds[static_cast<size_t>(from)] = got;
      ++received;
      progress = true;
    }
    if (progress) continue;
    if (Clock::now() >= deadline) {
      std::string missing;
      for (int p = 0; p < world; ++p) {
        if (p != rank && fds[static_cast<size_t>(p)] < 0) {
          StrAppend(&missing, missing.empty() ? "" : ", ", p);
        }
      }
      OPREG_THROW(kRuntime, "symm_mem: ", who, ": timed out after ", timeout.count(),
                  " ms exchanging fds; no fd from rank(s) ", missing.empty() ? "-" : missing,
                  pending.empty() ? "" : "; could not deliver ours to every peer");
    }
    pollfd pfd{cleanup.sock, POLLIN, 0};
    ::poll(&pfd, 1, 1);
  }
  // Every peer has passed its WaitRanks (it sent us its fd), so nobody reads these keys now.
  store.Delete(StrCat(key_prefix, "/ready/", rank));
  if (rank == 0) store.Delete(StrCat(key_prefix, "/nonce"));
  cleanup.release = true;
  return fds;
}

}  // namespace opreg::symm_mem
