// Private to the MPI store (mpi_store.cc, mpi_store_server.cc): the wire format of requests and
// replies, the MPI error check, the polling backoff, and MpiStore::Impl, whose client side and
// lifetime are in mpi_store.cc and whose root-side service loop is in mpi_store_server.cc.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/symm_mem/mpi_store.h"

namespace opreg::symm_mem {
namespace mpi_internal {

using Clock = std::chrono::steady_clock;

constexpr int kRequestTag = 1;
constexpr int kFirstReplyTag = 2;
// How much longer than a Get's own timeout a client waits for the root's answer.
constexpr Millis kReplyGrace(10000);

enum class Op : uint8_t { kSet = 1, kGet, kTryGet, kAdd, kDelete, kBye };
enum class Status : uint8_t { kOk = 0, kMissing = 1, kShutDown = 2 };

// Request: op u8 | reply tag i32 | arg i64 (timeout ms or delta) | key size u32 | key | value.
struct Request {
  Op op;
  int32_t tag;
  int64_t arg;
  std::string key;
  std::string value;
};

template <class T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}
template <class T>
T Take(const std::string& in, size_t* pos) {
  T v;
  OPREG_CHECK(*pos + sizeof(T) <= in.size(), "MpiStore: truncated message");
  std::memcpy(&v, in.data() + *pos, sizeof(T));
  *pos += sizeof(T);
  return v;
}

std::string MpiErrorText(int code);

// Sleeps with exponential backoff: a few immediate retries, then 5 us doubling to `cap`.
class Backoff {
 public:
  explicit Backoff(std::chrono::microseconds cap) : cap_(cap) {}
  void Pause() {
    if (spins_ < 32) {
      ++spins_;
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(delay_);
    delay_ = std::min(delay_ * 2, cap_);
  }
  void Reset() {
    spins_ = 0;
    delay_ = std::chrono::microseconds(5);
  }

 private:
  std::chrono::microseconds cap_;
  int spins_ = 0;
  std::chrono::microseconds delay_{5};
};

}  // namespace mpi_internal

#define OPREG_MPI_CALL(call)                                       \
  do {                                                             \
    const int opreg_mpi_rc_ = (call);                              \
    OPREG_CHECK(opreg_mpi_rc_ == MPI_SUCCESS, "MpiStore: ", #call, \
                " failed: ", MpiErrorText(opreg_mpi_rc_));         \
  } while (false)

struct MpiStore::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int world = 1;
  MpiStoreOptions options;
  int tag_ub = 32767;
  std::atomic<uint32_t> next_tag{0};

  // The map (meaningful on the root only).
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::string, std::less<>> map;

  // Service thread (root only).
  std::thread service;
  std::atomic<bool> stop{false};            // stop now (forced)
  std::atomic<bool> root_bye{false};        // the root itself called Shutdown
  std::atomic<bool> wake{false};            // a local change: poll fast again
  std::atomic<int64_t> bye_deadline_ns{0};  // steady-clock time the root stops waiting
  std::vector<int> missing_at_stop;         // ranks that never said goodbye (after join)

  std::mutex shutdown_mu;
  std::atomic<bool> shut_down{false};
  int keyval = MPI_KEYVAL_INVALID;

  bool is_root() const { return rank == options.root; }
  std::string Who() const { return StrCat("MpiStore (rank ", rank, ", root ", options.root, ")"); }

  int32_t NextTag();

  void CheckOpen(std::string_view what) const {
    OPREG_CHECK(!shut_down.load(), "symm_mem ", Who(), ": ", what, " after Shutdown");
  }

  // Polls `req` until complete; false when `deadline` passes first (the request stays live).
  static bool WaitRequest(MPI_Request* req, mpi_internal::Clock::time_point deadline);

  // A round trip to the root; returns the reply's status, integer and value.
  mpi_internal::Status Call(mpi_internal::Op op, std::string_view key, std::string_view value,
                            int64_t arg, Millis wait, int64_t* n_out, std::string* value_out);

  void Shutdown(Millis timeout);

  // ---- Root side (mpi_store_server.cc) ----------------------------------------------------------

  struct Waiter {
    int source;
    int32_t tag;
    std::string key;
    mpi_internal::Clock::time_point deadline;
  };
  struct PendingSend {
    MPI_Request req;
    std::unique_ptr<std::string> buf;
  };

  void Reply(std::list<PendingSend>* sends, int dst, int32_t tag, mpi_internal::Status s, int64_t n,
             std::string_view value);
  int64_t AddLocked(std::string_view key, int64_t delta);
  void Serve();
  void Handle(mpi_internal::Request r, int source, std::list<PendingSend>* sends,
              std::vector<Waiter>* waiters, std::vector<std::pair<int, int32_t>>* byes);
};

}  // namespace opreg::symm_mem
