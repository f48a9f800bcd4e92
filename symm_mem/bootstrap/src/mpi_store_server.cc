// MpiStore's root side: the service thread's loop (Serve) takes requests from every rank with
// MPI_Improbe/MPI_Mrecv on the request tag, answers each on its reply tag with an MPI_Isend
// tracked until complete, parks Gets until their key appears or their time is up, and ends with
// the goodbye round of Shutdown. It is apart from the client side (mpi_store.cc) because only
// the root runs it.
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "mpi_store_impl.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"

namespace opreg::symm_mem {

using mpi_internal::Backoff;
using mpi_internal::Clock;
using mpi_internal::kRequestTag;
using mpi_internal::MpiErrorText;
using mpi_internal::Op;
using mpi_internal::Put;
using mpi_internal::Request;
using mpi_internal::Status;
using mpi_internal::Take;

namespace {

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

}  // namespace

void MpiStore::Impl::Reply(std::list<PendingSend>* sends, int dst, int32_t tag, Status s, int64_t n,
                           std::string_view value) {
  auto buf = std::make_unique<std::string>(EncodeReply(s, n, value));
  MPI_Request req;
  OPREG_MPI_CALL(
      MPI_Isend(buf->data(), static_cast<int>(buf->size()), MPI_BYTE, dst, tag, comm, &req));
  sends->push_back({req, std::move(buf)});
}

int64_t MpiStore::Impl::AddLocked(std::string_view key, int64_t delta) {
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

void MpiStore::Impl::Serve() {
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

void MpiStore::Impl::Handle(Request r, int source, std::list<PendingSend>* sends,
                            std::vector<Waiter>* waiters,
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
        waiters->push_back({source, r.tag, std::move(r.key), DeadlineAfter(Millis(r.arg))});
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

}  // namespace opreg::symm_mem
