// MpiStore: the root of a duplicated communicator serves a key-value map from a polling service
// thread (MPI_Improbe/MPI_Mrecv on one request tag, replies on per-request tags, sends as
// MPI_Isend tracked until complete); clients poll for replies with a backing-off sleep.
// Shutdown is a goodbye round through the root; MPI_Finalize runs it through an attribute on
// MPI_COMM_SELF.
#include "opreg/symm_mem/mpi_store.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/core/logging.h"

namespace opreg::symm_mem {
namespace {

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

std::string EncodeRequest(Op op, int32_t tag, int64_t arg, std::string_view key,
                          std::string_view value) {
  std::string out;
  out.reserve(1 + 4 + 8 + 4 + key.size() + value.size());
  Put(&out, static_cast<uint8_t>(op));
  Put(&out, tag);
  Put(&out, arg);
  Put(&out, static_cast<uint32_t>(key.size()));
  out.append(key);
  out.append(value);
  return out;
}

Request DecodeRequest(const std::string& in) {
  size_t pos = 0;
  Request r;
  r.op = static_cast<Op>(Take<uint8_t>(in, &pos));
  r.tag = Take<int32_t>(in, &pos);
  r.arg = Take<int64_t>(in, &pos);
  const uint32_t n = Take<uint32_t>(in, &pos);
  OPREG_CHECK(pos + n <= in.size(), "MpiStore: truncated key");
  r.key.assign(in, pos, n);
  r.value.assign(in, pos + n, std::string::npos);
  return r;
}

// Reply: status u8 | integer i64 | value.
std::string EncodeReply(Status s, int64_t n, std::string_view value) {
  std::string out;
  Put(&out, static_cast<uint8_t>(s));
  Put(&out, n);
  out.append(value);
  return out;
}

std::string MpiErrorText(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return StrCat("MPI error ", code);
  return std::string(buf, static_cast<size_t>(len));
}

#define OPREG_MPI_CALL(call)                                       \
  do {                                                             \
    const int opreg_mpi_rc_ = (call);                              \
    OPREG_CHECK(opreg_mpi_rc_ == MPI_SUCCESS, "MpiStore: ", #call, \
                " failed: ", MpiErrorText(opreg_mpi_rc_));         \
  } while (false)

const char* LevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown thread level";
  }
}

bool MpiFinalized() {
  int f = 0;
  MPI_Finalized(&f);
  return f != 0;
}

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

}  // namespace

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

  int32_t NextTag() {
    const uint32_t span = static_cast<uint32_t>(tag_ub - kFirstReplyTag);
    return kFirstReplyTag + static_cast<int32_t>(next_tag.fetch_add(1) % span);
  }

  void CheckOpen(std::string_view what) const {
    OPREG_CHECK(!shut_down.load(), "symm_mem ", Who(), ": ", what, " after Shutdown");
  }

  // Polls `req` until complete; false when `deadline` passes first (the request stays live).
  static bool WaitRequest(MPI_Request* req, Clock::time_point deadline) {
    Backoff backoff(std::chrono::microseconds(1000));
    for (;;) {
      int done = 0;
      OPREG_MPI_CALL(MPI_Test(req, &done, MPI_STATUS_IGNORE));
      if (done) return true;
      if (Clock::now() >= deadline) return false;
      backoff.Pause();
    }
  }

  // A round trip to the root; returns the reply's status, integer and value.
  Status Call(Op op, std::string_view key, std::string_view value, int64_t arg, Millis wait,
              int64_t* n_out, std::string* value_out) {
    const int32_t tag = NextTag();
    auto msg = std::make_unique<std::string>(EncodeRequest(op, tag, arg, key, value));
    const auto deadline = Clock::now() + wait + kReplyGrace;
    MPI_Request req;
    OPREG_MPI_CALL(MPI_Isend(msg->data(), static_cast<int>(msg->size()), MPI_BYTE, options.root,
                             kRequestTag, comm, &req));
    if (!WaitRequest(&req, deadline)) {
      MPI_Cancel(&req);
      MPI_Request_free(&req);
      (void)msg.release();  // MPI may still read it: leak rather than free under it
      OPREG_THROW(kRuntime, "symm_mem ", Who(), ": the root (rank ", options.root,
                  ") did not take the request for key '", key, "'; it died or shut its store down");
    }
    Backoff backoff(std::chrono::microseconds(1000));
    for (;;) {
      int found = 0;
      MPI_Message m;
      MPI_Status st;
      OPREG_MPI_CALL(MPI_Improbe(options.root, tag, comm, &found, &m, &st));
      if (found) {
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        std::string reply(static_cast<size_t>(count), '\0');
        OPREG_MPI_CALL(MPI_Mrecv(reply.data(), count, MPI_BYTE, &m, MPI_STATUS_IGNORE));
        size_t pos = 0;
        const auto s = static_cast<Status>(Take<uint8_t>(reply, &pos));
        const int64_t n = Take<int64_t>(reply, &pos);
        if (n_out != nullptr) *n_out = n;
        if (value_out != nullptr) value_out->assign(reply, pos, std::string::npos);
        return s;
      }
      if (Clock::now() >= deadline) {
        OPREG_THROW(kRuntime, "symm_mem ", Who(), ": no answer from the root (rank ", options.root,
                    ") for key '", key, "' within ",
                    std::chrono::duration_cast<Millis>(wait + kReplyGrace).count(),
                    " ms; the root died or shut its store down");
      }
      backoff.Pause();
    }
  }

  // ---- Root side ------------------------------------------------------------------------------

  struct Waiter {
    int source;
    int32_t tag;
    std::string key;
    Clock::time_point deadline;
  };
  struct PendingSend {
    MPI_Request req;
    std::unique_ptr<std::string> buf;
  };

  void Reply(std::list<PendingSend>* sends, int dst, int32_t tag, Status s, int64_t n,
             std::string_view value) {
    auto buf = std::make_unique<std::string>(EncodeReply(s, n, value));
    MPI_Request req;
    OPREG_MPI_CALL(
        MPI_Isend(buf->data(), static_cast<int>(buf->size()), MPI_BYTE, dst, tag, comm, &req));
    sends->push_back({req, std::move(buf)});
  }

  int64_t AddLocked(std::string_view key, int64_t delta) {
    auto it = map.find(key);
    int64_t v = 0;
    if (it != map.end() && !it->second.empty()) v = std::strtoll(it->second.c_str(), nullptr, 10);
    v += delta;
    if (it == map.end()) {
      map.emplace(std::string(key), std::to_string(v));
    } else {
      it->second = std::to_string(v);
    }
    return v;
  }

  void Serve() {
    std::list<PendingSend> sends;
    std::vector<Waiter> waiters;
    std::vector<std::pair<int, int32_t>> byes;  // (rank, reply tag)
    Backoff backoff(std::chrono::microseconds(1000));
    std::string buf;
    auto ack_all = [&](Status s) {
      for (const auto& [src, tag] : byes) Reply(&sends, src, tag, s, 0, "");
    };
    try {
      for (;;) {
        if (stop.load()) break;
        int found = 0;
        MPI_Message m;
        MPI_Status st;
        OPREG_MPI_CALL(MPI_Improbe(MPI_ANY_SOURCE, kRequestTag, comm, &found, &m, &st));
        if (found) {
          int count = 0;
          MPI_Get_count(&st, MPI_BYTE, &count);
          buf.assign(static_cast<size_t>(count), '\0');
          OPREG_MPI_CALL(MPI_Mrecv(buf.data(), count, MPI_BYTE, &m, MPI_STATUS_IGNORE));
          Handle(DecodeRequest(buf), st.MPI_SOURCE, &sends, &waiters, &byes);
          backoff.Reset();
          continue;
        }
        // Parked Gets: answered when the key exists, or when their time is up.
        const auto now = Clock::now();
        if (!waiters.empty()) {
          std::lock_guard<std::mutex> lock(mu);
          for (auto it = waiters.begin(); it != waiters.end();) {
            auto kv = map.find(it->key);
            if (kv != map.end()) {
              Reply(&sends, it->source, it->tag, Status::kOk, 0, kv->second);
            } else if (now >= it->deadline) {
              Reply(&sends, it->source, it->tag, Status::kMissing, 0, "");
            } else {
              ++it;
              continue;
            }
            it = waiters.erase(it);
          }
        }
        for (auto it = sends.begin(); it != sends.end();) {
          int done = 0;
          OPREG_MPI_CALL(MPI_Test(&it->req, &done, MPI_STATUS_IGNORE));
          it = done ? sends.erase(it) : std::next(it);
        }
        if (root_bye.load()) {
          const bool all = static_cast<int>(byes.size()) == world - 1;
          const bool late = Clock::now().time_since_epoch().count() >= bye_deadline_ns.load();
          if (all || late) {
            std::vector<bool> seen(static_cast<size_t>(world), false);
            seen[static_cast<size_t>(rank)] = true;
            for (const auto& b : byes) seen[static_cast<size_t>(b.first)] = true;
            for (int r = 0; r < world; ++r) {
              if (!seen[static_cast<size_t>(r)]) missing_at_stop.push_back(r);
            }
            break;
          }
        }
        if (wake.exchange(false)) backoff.Reset();
        backoff.Pause();
      }
      // Goodbye: everyone who said it gets an answer; parked Gets learn the store is gone.
      ack_all(Status::kOk);
      for (const Waiter& w : waiters) Reply(&sends, w.source, w.tag, Status::kShutDown, 0, "");
      const auto deadline = Clock::now() + Millis(2000);
      for (auto& s : sends) {
        if (!WaitRequest(&s.req, deadline)) {
          MPI_Cancel(&s.req);
          MPI_Request_free(&s.req);
          (void)s.buf.release();  // MPI may still read it: leak rather than free under it
        }
      }
    } catch (const std::exception& e) {
      Logger().error("symm_mem {}: service thread stopped: {}", Who(), e.what());
    }
    std::lock_guard<std::mutex> lock(mu);
    stop.store(true);
    cv.notify_all();
  }

  void Handle(Request r, int source, std::list<PendingSend>* sends, std::vector<Waiter>* waiters,
              std::vector<std::pair<int, int32_t>>* byes) {
    switch (r.op) {
      case Op::kSet: {
        {
          std::lock_guard<std::mutex> lock(mu);
          map[r.key] = std::move(r.value);
        }
        cv.notify_all();
        Reply(sends, source, r.tag, Status::kOk, 0, "");
        break;
      }
      case Op::kGet:
      case Op::kTryGet: {
        std::unique_lock<std::mutex> lock(mu);
        auto it = map.find(r.key);
        if (it != map.end()) {
          std::string v = it->second;
          lock.unlock();
          Reply(sends, source, r.tag, Status::kOk, 0, v);
        } else if (r.op == Op::kTryGet || r.arg <= 0) {
          lock.unlock();
          Reply(sends, source, r.tag, Status::kMissing, 0, "");
        } else {
          waiters->push_back({source, r.tag, std::move(r.key), Clock::now() + Millis(r.arg)});
        }
        break;
      }
      case Op::kAdd: {
        int64_t v = 0;
        {
          std::lock_guard<std::mutex> lock(mu);
          v = AddLocked(r.key, r.arg);
        }
        cv.notify_all();
        Reply(sends, source, r.tag, Status::kOk, v, "");
        break;
      }
      case Op::kDelete: {
        {
          std::lock_guard<std::mutex> lock(mu);
          auto it = map.find(r.key);
          if (it != map.end()) map.erase(it);
        }
        Reply(sends, source, r.tag, Status::kOk, 0, "");
        break;
      }
      case Op::kBye:
        byes->push_back({source, r.tag});
        break;
      default:
        Logger().warn("symm_mem {}: ignoring a malformed request from rank {}", Who(), source);
    }
  }

  void Shutdown(Millis timeout) {
    std::lock_guard<std::mutex> lock(shutdown_mu);
    if (shut_down.load()) return;
    if (MpiFinalized()) {  // nothing may touch MPI any more; the hook normally ran before
      shut_down.store(true);
      if (service.joinable()) {
        stop.store(true);
        service.join();
      }
      return;
    }
    if (is_root()) {
      bye_deadline_ns.store((Clock::now() + timeout).time_since_epoch().count());
      root_bye.store(true);
      if (service.joinable()) service.join();
      if (!missing_at_stop.empty()) {
        std::string ranks;
        for (int r : missing_at_stop) StrAppend(&ranks, ranks.empty() ? "" : ", ", r);
        Logger().warn(
            "symm_mem {}: rank(s) {} did not shut the store down within {} ms; "
            "stopping the service anyway",
            Who(), ranks, timeout.count());
      }
    } else {
      try {
        int64_t n = 0;
        Call(Op::kBye, "", "", 0, timeout, &n, nullptr);
      } catch (const std::exception& e) {
        Logger().warn("symm_mem {}: Shutdown: {}", Who(), e.what());
      }
    }
    shut_down.store(true);
    MPI_Comm_free(&comm);
  }
};

namespace {

// MPI_Finalize deletes MPI_COMM_SELF's attributes first: the store shuts down while MPI works.
int FinalizeHook(MPI_Comm, int, void* attr, void*) {
  auto* weak = static_cast<std::weak_ptr<MpiStore::Impl>*>(attr);
  if (std::shared_ptr<MpiStore::Impl> impl = weak->lock()) {
    try {
      impl->Shutdown(impl->options.shutdown_timeout);
    } catch (const std::exception& e) {
      Logger().warn("symm_mem MpiStore: shutdown at MPI_Finalize failed: {}", e.what());
    }
  }
  delete weak;
  return MPI_SUCCESS;
}

}  // namespace

std::string MpiThreadLevelName() {
  int init = 0;
  MPI_Initialized(&init);
  if (!init || MpiFinalized()) return "not initialized";
  int level = 0;
  MPI_Query_thread(&level);
  return LevelName(level);
}

MpiStore::MpiStore(MPI_Comm comm, MpiStoreOptions options) : impl_(std::make_shared<Impl>()) {
  int init = 0;
  MPI_Initialized(&init);
  OPREG_CHECK(init && !MpiFinalized(),
              "symm_mem MpiStore: MPI is not initialized (or already finalized); call "
              "MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) first");
  int level = 0;
  MPI_Query_thread(&level);
  OPREG_CHECK(level == MPI_THREAD_MULTIPLE,
              "symm_mem MpiStore: needs MPI_THREAD_MULTIPLE (its service thread calls MPI "
              "concurrently with the application) but MPI provides ",
              LevelName(level),
              "; initialize MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, &provided) and "
              "use an MPI library built with thread support");
  OPREG_CHECK_VALUE(comm != MPI_COMM_NULL, "symm_mem MpiStore: MPI_COMM_NULL");
  Impl& s = *impl_;
  s.options = options;
  MPI_Comm_rank(comm, &s.rank);
  MPI_Comm_size(comm, &s.world);
  OPREG_CHECK_VALUE(options.root >= 0 && options.root < s.world, "symm_mem MpiStore: root ",
                    options.root, " is not in [0, ", s.world, ")");
  OPREG_MPI_CALL(MPI_Comm_dup(comm, &s.comm));
  MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);  // failures become opreg::Error
  void* ub = nullptr;
  int has = 0;
  MPI_Comm_get_attr(s.comm, MPI_TAG_UB, &ub, &has);
  if (has && ub != nullptr) s.tag_ub = *static_cast<int*>(ub);
  OPREG_MPI_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, FinalizeHook, &s.keyval, nullptr));
  OPREG_MPI_CALL(MPI_Comm_set_attr(MPI_COMM_SELF, s.keyval, new std::weak_ptr<Impl>(impl_)));
  if (s.is_root()) s.service = std::thread([impl = impl_.get()] { impl->Serve(); });
}

MpiStore::~MpiStore() {
  try {
    impl_->Shutdown(impl_->options.shutdown_timeout);
  } catch (const std::exception& e) {
    Logger().warn("symm_mem {}: shutdown in the destructor failed: {}", impl_->Who(), e.what());
  }
  if (!MpiFinalized() && impl_->keyval != MPI_KEYVAL_INVALID) {
    MPI_Comm_delete_attr(MPI_COMM_SELF, impl_->keyval);  // runs FinalizeHook: frees the weak_ptr
    MPI_Comm_free_keyval(&impl_->keyval);
  }
}

void MpiStore::Set(std::string_view key, std::string_view value) {
  Impl& s = *impl_;
  s.CheckOpen("Set");
  if (s.is_root()) {
    {
      std::lock_guard<std::mutex> lock(s.mu);
      s.map.insert_or_assign(std::string(key), std::string(value));
    }
    s.cv.notify_all();
    s.wake.store(true);
    return;
  }
  s.Call(Op::kSet, key, value, 0, Millis(0), nullptr, nullptr);
}

std::string MpiStore::Get(std::string_view key, Millis timeout) {
  Impl& s = *impl_;
  s.CheckOpen("Get");
  const auto timed_out = [&] {
    return StrCat("symm_mem store: timed out after ", timeout.count(), " ms waiting for key '", key,
                  "' (", s.Who(), ")");
  };
  if (s.is_root()) {
    std::unique_lock<std::mutex> lock(s.mu);
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      auto it = s.map.find(key);
      if (it != s.map.end()) return it->second;
      OPREG_CHECK(!s.stop.load(), "symm_mem ", s.Who(), ": Get('", key,
                  "') while the store's service is stopped");
      if (s.cv.wait_until(lock, deadline) == std::cv_status::timeout) {
        it = s.map.find(key);
        if (it != s.map.end()) return it->second;
        OPREG_THROW(kRuntime, timed_out());
      }
    }
  }
  std::string value;
  const Status st =
      s.Call(Op::kGet, key, "", std::max<int64_t>(timeout.count(), 0), timeout, nullptr, &value);
  if (st == Status::kShutDown) {
    OPREG_THROW(kRuntime, "symm_mem ", s.Who(), ": Get('", key, "'): the root shut the store down");
  }
  if (st != Status::kOk) OPREG_THROW(kRuntime, timed_out());
  return value;
}

bool MpiStore::TryGet(std::string_view key, std::string* value) {
  Impl& s = *impl_;
  s.CheckOpen("TryGet");
  if (s.is_root()) {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.map.find(key);
    if (it == s.map.end()) return false;
    *value = it->second;
    return true;
  }
  std::string v;
  if (s.Call(Op::kTryGet, key, "", 0, Millis(0), nullptr, &v) != Status::kOk) return false;
  *value = std::move(v);
  return true;
}

int64_t MpiStore::Add(std::string_view key, int64_t delta) {
  Impl& s = *impl_;
  s.CheckOpen("Add");
  if (s.is_root()) {
    int64_t v = 0;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      v = s.AddLocked(key, delta);
    }
    s.cv.notify_all();
    s.wake.store(true);
    return v;
  }
  int64_t v = 0;
  s.Call(Op::kAdd, key, "", delta, Millis(0), &v, nullptr);
  return v;
}

void MpiStore::Delete(std::string_view key) {
  Impl& s = *impl_;
  s.CheckOpen("Delete");
  if (s.is_root()) {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.map.find(key);
    if (it != s.map.end()) s.map.erase(it);
    return;
  }
  s.Call(Op::kDelete, key, "", 0, Millis(0), nullptr, nullptr);
}

void MpiStore::Shutdown(Millis timeout) { impl_->Shutdown(timeout); }
bool MpiStore::shut_down() const { return impl_->shut_down.load(); }
int MpiStore::rank() const { return impl_->rank; }
int MpiStore::world_size() const { return impl_->world; }
int MpiStore::root() const { return impl_->options.root; }

std::shared_ptr<Group> CreateMpiGroup(std::string name, MPI_Comm comm, GroupOptions options,
                                      std::shared_ptr<MpiStore>* store_out) {
  OPREG_CHECK_VALUE(comm != MPI_COMM_NULL, "symm_mem::CreateMpiGroup('", name, "'): MPI_COMM_NULL");
  int rank = 0, world = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &world);
  auto store = std::make_shared<MpiStore>(comm);
  if (store_out != nullptr) *store_out = store;
  return Group::Create(std::move(name), rank, world, std::move(store), options);
}

}  // namespace opreg::symm_mem
