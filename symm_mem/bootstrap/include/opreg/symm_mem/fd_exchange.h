// All-to-all exchange of one file descriptor per rank between the processes of a group.
//
// Purpose: both backends share memory between rank processes as file descriptors (the host
// backend its memfd heaps, the CUDA backend each cuMemCreate block exported as a POSIX fd), and
// every peer must receive every rank's fd. Whoever holds such an fd can read and write that
// rank's symmetric memory, so the exchange hands fds only to the processes of the group.
//
// Protocol. Each rank listens on a Unix SOCK_SEQPACKET socket: a path in the store's private
// directory (Store::PrivateSocketDirectory, a FileStore directory of mode 0700) when it has one,
// else in a 0700 directory it makes under $TMPDIR or /tmp (the MPI store); an abstract name with
// a random 64-bit token only with OPREG_SYMM_MEM_ABSTRACT_SOCKETS=1. Sending never blocks in
// connect() and the rank accepts while it sends, all within `timeout`. Once it listens, the rank
// publishes "pid uid address" under `key_prefix`/peer/<rank>. Then, for every peer, it connects
// to the published address, checks the socket owner's credentials (SO_PEERCRED) against the pid
// and uid the peer published, and only then sends its rank number and its fd (SCM_RIGHTS). It
// accepts connections on its own socket and takes an fd only from a connection whose SO_PEERCRED
// pid and uid are those a peer published, carrying exactly that peer's rank and one fd. Every
// other connection is closed unread and every malformed message dropped (the first few are
// logged), and the exchange goes on until every real peer has delivered. Every rank must run as
// the same uid. Threat model: docs/security.md.
//
// Errors: opreg::Error (kRuntime) on socket failures, a peer of another uid, a published socket
// owned by another process than the one that published it ("refusing to send this rank's fd:
// the socket of rank 1 (...) belongs to pid P uid U, but rank 1 published pid Q uid V"), or
// when the exchange does not complete within `timeout` (naming the ranks whose fd did not
// arrive, those that could not be reached, and the refused connections).
//
// Ownership: the caller keeps `fd` (it is duplicated into the peers by the kernel). The result
// holds, at index r != rank, a new fd owned by the caller (close it after use); at index
// `rank` it holds -1. On error, every received fd is closed. The socket (and its file) is
// closed and the store key this rank published removed before it returns.
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
