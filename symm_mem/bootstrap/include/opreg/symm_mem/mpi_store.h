// MPI bootstrap of symmetric-memory groups: a Store served over MPI, and a Group helper that
// takes an MPI communicator (name, rank and world come from the communicator).
//
// What it is for. Jobs launched with `mpirun` (OpenMPI from Debian) have no shared directory to
// put a FileStore in when their ranks span machines; MpiStore gives them the same key-value
// store over MPI messages, so Group::Create (identities, readiness, allocation rendezvous) works
// unchanged. The heaps themselves are still host memfds exchanged with SCM_RIGHTS, so the ranks
// of one *group* must share a machine; the store is what travels over MPI.
//
// Design. The constructor duplicates the communicator (collective: every rank of `comm`
// constructs its MpiStore at the same point). Rank `root` of the duplicate keeps the map and
// serves it from a service thread: requests come as point-to-point messages on the duplicate
// (so they never match the application's own messages), each carrying a reply tag of its own.
// The service thread polls (MPI_Iprobe + a sleep that backs off to 1 ms when idle) rather than
// blocking in MPI_Recv, because OpenMPI's blocking calls busy-wait and would burn a core.
// Get(key, timeout) parks on the root until the key appears or the timeout passes (no polling
// over the network); on the root itself the calls touch the map directly.
//
// Requirements and errors (opreg::Error):
//   - MPI must be initialized with MPI_THREAD_MULTIPLE (MPI_Init_thread): the service thread
//     and the application call MPI concurrently. A lower provided level, or MPI not initialized
//     (or already finalized), is a kRuntime error naming the level provided and the fix.
//   - Get timing out is kRuntime "symm_mem store: timed out after N ms waiting for key '...'
//     (MpiStore, root R)", like FileStore. A root that does not answer at all (dead, or shut
//     down) makes a client call fail with kRuntime after its timeout instead of hanging.
//   - Calls after Shutdown are kRuntime errors.
//   - Values are bytes of any content; keys any non-empty-or-empty string; Add counters are
//     stored as decimal text (Get of a counter returns "3"), as in FileStore.
//
// Ownership and shutdown. Shutdown(timeout) is collective over the communicator: every rank
// says goodbye to the root, the root answers all of them once all have arrived (so no rank
// leaves while another still needs the map), then the service thread stops and the duplicate
// communicator is freed. It never hangs: a rank that does not arrive within `timeout` is
// logged and the root stops anyway. The destructor calls Shutdown if it was not called; and
// MPI_Finalize runs it too (an attribute on MPI_COMM_SELF), so a store still alive at
// MPI_Finalize is shut down before MPI goes away (an MpiStore destroyed after MPI_Finalize does
// no MPI calls). Call Group::Destroy before shutting the group's store down (Destroy uses it).
//
// Thread safety. All Store methods may be called from several threads at once (each request
// has its own reply tag). Shutdown must be called at most once concurrently per process.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <string_view>

#include "opreg/symm_mem/store.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace opreg::symm_mem {

struct MpiStoreOptions {
  // The rank of `comm` that holds the map and runs the service thread.
  int root = 0;
  // How long Shutdown (and the destructor) waits for the other ranks to arrive.
  Millis shutdown_timeout = Millis(30000);
};

class MpiStore : public Store {
 public:
  // Collective over `comm` (duplicates it). kRuntime error when MPI is not initialized with
  // MPI_THREAD_MULTIPLE; kValue for a root outside the communicator.
  explicit MpiStore(MPI_Comm comm, MpiStoreOptions options = {});
  ~MpiStore() override;  // Shutdown(options.shutdown_timeout) unless already shut down.
  MpiStore(const MpiStore&) = delete;
  MpiStore& operator=(const MpiStore&) = delete;

  void Set(std::string_view key, std::string_view value) override;
  std::string Get(std::string_view key, Millis timeout) override;
  bool TryGet(std::string_view key, std::string* value) override;
  int64_t Add(std::string_view key, int64_t delta) override;
  void Delete(std::string_view key) override;

  // Collective: see the file comment. Idempotent (later calls return at once).
  void Shutdown(Millis timeout);
  bool shut_down() const;

  int rank() const;
  int world_size() const;
  int root() const;

  struct Impl;  // shared with the MPI_Finalize hook

 private:
  std::shared_ptr<Impl> impl_;
};

// Collective over `comm`: Group::Create(name, rank in comm, size of comm, a new MpiStore over
// comm, options). The group keeps the store alive; *store_out (when given) receives it too, for
// an explicit Shutdown after Group::Destroy.
std::shared_ptr<Group> CreateMpiGroup(std::string name, MPI_Comm comm, GroupOptions options = {},
                                      std::shared_ptr<MpiStore>* store_out = nullptr);

// The thread level MPI provides, as text ("MPI_THREAD_MULTIPLE", ...); "not initialized" when
// MPI is not initialized.
std::string MpiThreadLevelName();

}  // namespace opreg::symm_mem
