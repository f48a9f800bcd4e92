// MpiStore: the root of a duplicated communicator serves a key-value map from a polling service
// thread (MPI_Improbe/MPI_Mrecv on one request tag, replies on per-request tags, sends as
// MPI_Isend tracked until complete); clients poll for replies with a backing-off sleep.
// Shutdown is a goodbye round through the root; MPI_Finalize runs it through an attribute on
// MPI_COMM_SELF.
//
// This file holds the client side of a request (Call), the store's lifetime (construction,
// Shutdown, the MPI_Finalize hook) and the public API, which on the root reads the map
// directly; the root's service loop is in mpi_store_server.cc, since only the root runs it.
#include "opreg/symm_mem/mpi_store.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "mpi_store_impl.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"

namespace opreg::symm_mem {

using mpi_internal::Backoff;
using mpi_internal::Clock;
using mpi_internal::kFirstReplyTag;
using mpi_internal::kReplyGrace;
using mpi_internal::kRequestTag;
using mpi_internal::MpiErrorText;
using mpi_internal::Op;
using mpi_internal::Put;
using mpi_internal::Status;
using mpi_internal::Take;

namespace mpi_internal {

std::string MpiErrorText(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return StrCat("MPI error ", code);
  return std::string(buf, static_cast<size_t>(len));
}

}  // namespace mpi_internal

namespace {

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

}  // namespace

int32_t MpiStore::Impl::NextTag() {
  const uint32_t span = static_cast<uint32_t>(tag_ub - kFirstReplyTag);
  return kFirstReplyTag + static_cast<int32_t>(next_tag.fetch_add(1) % span);
}

// Polls `req` until complete; false when `deadline` passes first (the request stays live).
bool MpiStore::Impl::WaitRequest(MPI_Request* req, Clock::time_point deadline) {
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
Status MpiStore::Impl::Call(Op op, std::string_view key, std::string_view value, int64_t arg,
                            Millis wait, int64_t* n_out, std::string* value_out) {
  const int32_t tag = NextTag();
  auto msg = std::make_unique<std::string>(EncodeRequest(op, tag, arg, key, value));
  const auto deadline =
      DeadlineAfter(wait > Millis::max() - kReplyGrace ? Millis::max() : wait + kReplyGrace);
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

void MpiStore::Impl::Shutdown(Millis timeout) {
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
    bye_deadline_ns.store(DeadlineAfter(timeout).time_since_epoch().count());
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
    const auto deadline = DeadlineAfter(timeout);
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
