// All-to-all exchange of one file descriptor per rank between the processes of a group.
//
// Purpose: both backends share memory between rank processes as file descriptors (the host
// backend its memfd heaps, the CUDA backend each cuMemCreate block exported as a POSIX fd), and
// every peer must receive every rank's fd. ExchangeFds sends this rank's fd to every peer with
// SCM_RIGHTS over abstract-namespace Unix datagram sockets (no socket files), named from a
// random nonce that rank 0 publishes in the store under `key_prefix`.
//
// Errors: opreg::Error (kRuntime) on socket failures, unexpected messages, or when a peer's fd
// does not arrive within `timeout` (naming the missing ranks).
//
// Ownership: the caller keeps `fd` (it is duplicated into the peers by the kernel). The result
// holds, at index r != rank, a new fd owned by the caller (close it after use); at index
// `rank` it holds -1. On error, every received fd is closed. The store keys it creates are
// removed before it returns.
//
// Thread safety: one exchange per `key_prefix` at a time; otherwise reentrant.
#pragma once

#include <string>
#include <vector>

#include "opreg/symm_mem/store.h"

namespace opreg::symm_mem {

std::vector<int> ExchangeFds(Store& store, const std::string& key_prefix, int rank, int world,
                             int fd, Millis timeout);

}  // namespace opreg::symm_mem
