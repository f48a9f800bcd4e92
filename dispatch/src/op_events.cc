// The dispatcher's op event stream (Dispatcher::Subscribe).
//
// A definition or undefinition queues its event under mu_, so the queue's order is the order
// the ops changed in, and then delivers the queue. Delivery holds events_mu_, so one thread
// delivers at a time, in queue order; a thread that finds another delivering waits, and by the
// time it gets the lock its own event has been delivered (or it delivers it). A subscriber that
// defines an op or subscribes runs on the delivering thread, which holds events_mu_ already
// (recursive), and its events are delivered by the loop it runs in, after it returns.
//
// Replay is consistent with the queue because Subscribe reads the defined ops and the last
// queued sequence number under the same mu_: events up to that number are reflected in the
// snapshot (and skipped for this subscriber), later ones reach it through the queue.
#include "opreg/core/logging.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {
namespace {

thread_local bool t_delivering = false;  // this thread runs DeliverEvents' loop

void Notify(const Dispatcher::OpListener& listener, Dispatcher::OpEvent kind,
            const OperatorName& name) {
  try {
    listener(kind, name);
  } catch (const std::exception& e) {  // the event stands; the subscriber's problem
    Logger().error("an op event subscriber failed for {}: {}", name.str(), e.what());
  } catch (...) {
    Logger().error("an op event subscriber failed for {} (not a std::exception)", name.str());
  }
}

}  // namespace

void Dispatcher::QueueEventLocked(OpEvent kind, const OperatorName& name) {
  events_.push_back(QueuedEvent{++event_seq_, kind, name});
}

void Dispatcher::DeliverEvents() {
  if (t_delivering) return;  // a subscriber's own events: the running loop delivers them
  std::lock_guard<std::recursive_mutex> lock(events_mu_);
  t_delivering = true;
  struct Reset {
    ~Reset() { t_delivering = false; }
  } reset;
  for (;;) {
    QueuedEvent event;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (events_.empty()) return;
      event = std::move(events_.front());
      events_.pop_front();
    }
    // A copy: a subscriber may subscribe or unsubscribe while it is told.
    const std::vector<Subscriber> subscribers = subscribers_;
    for (const Subscriber& s : subscribers) {
      if (event.seq > s.after_seq) Notify(*s.listener, event.kind, event.name);
    }
  }
}

uint64_t Dispatcher::Subscribe(OpListener listener, bool replay) {
  auto shared = std::make_shared<const OpListener>(std::move(listener));
  uint64_t id;
  {
    std::lock_guard<std::recursive_mutex> lock(events_mu_);
    std::vector<OperatorName> defined;
    uint64_t after;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (replay) {
        for (const auto& entry : entries_) {
          if (entry->owned_definition_ != nullptr) defined.push_back(entry->name());
        }
      }
      after = event_seq_;
    }
    id = next_subscriber_id_++;
    subscribers_.push_back(Subscriber{id, after, shared});
    // Events the replay causes (the subscriber defines ops) wait for the loop below.
    const bool was_delivering = t_delivering;
    t_delivering = true;
    for (const OperatorName& name : defined) Notify(*shared, OpEvent::kDefined, name);
    t_delivering = was_delivering;
  }
  DeliverEvents();  // what was queued meanwhile
  return id;
}

void Dispatcher::Unsubscribe(uint64_t id) {
  std::lock_guard<std::recursive_mutex> lock(events_mu_);
  for (auto it = subscribers_.begin(); it != subscribers_.end(); ++it) {
    if (it->id == id) {
      subscribers_.erase(it);
      return;
    }
  }
}

}  // namespace opreg
