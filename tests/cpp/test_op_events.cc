// The dispatcher's op event stream: replay on subscribe, each event delivered once and in
// order (also while other threads define ops), undefinitions, unsubscribing, and subscribers
// that define ops themselves.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "opreg/core/string_util.h"
#include "opreg/dispatch/library.h"

namespace {

using opreg::Dispatcher;
using opreg::Library;
using Event = std::pair<Dispatcher::OpEvent, std::string>;
constexpr auto kDefined = Dispatcher::OpEvent::kDefined;
constexpr auto kUndefined = Dispatcher::OpEvent::kUndefined;

// What one subscriber heard of one namespace, in order.
class Heard {
 public:
  explicit Heard(std::string ns) : ns_(std::move(ns)) {}
  Dispatcher::OpListener Listener() {
    return [this](Dispatcher::OpEvent kind, const opreg::OperatorName& name) {
      if (name.ns() != ns_) return;
      std::lock_guard<std::mutex> lock(mu_);
      events_.emplace_back(kind, name.str());
    };
  }
  std::vector<Event> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  std::string ns_;
  std::mutex mu_;
  std::vector<Event> events_;
};

TEST_CASE("subscribing replays the defined ops, then hears each event once", "[events]") {
  auto lib = std::make_optional<Library>(Library::DEF, "ev_replay", std::nullopt, "e.cc", 1);
  lib->def("a(Tensor x) -> Tensor");
  lib->def("b(Tensor x) -> Tensor");
  Heard replayed("ev_replay");
  Heard live("ev_replay");
  auto& d = Dispatcher::Get();
  const uint64_t r = d.Subscribe(replayed.Listener(), /*replay=*/true);
  const uint64_t l = d.Subscribe(live.Listener(), /*replay=*/false);
  CHECK(replayed.events() == std::vector<Event>{{kDefined, "ev_replay::a"},
                                                {kDefined, "ev_replay::b"}});
  CHECK(live.events().empty());
  lib->def("c(Tensor x) -> Tensor");
  CHECK_THROWS(lib->def("c(Tensor x) -> Tensor"));  // refused: no event
  lib.reset();  // undefines a, b and c
  d.Unsubscribe(r);
  d.Unsubscribe(l);
  Library again(Library::DEF, "ev_replay", std::nullopt, "e.cc", 2);
  again.def("a(Tensor x) -> Tensor");  // after unsubscribing: unheard
  const std::vector<Event> after_c = {{kDefined, "ev_replay::c"},
                                      {kUndefined, "ev_replay::c"},
                                      {kUndefined, "ev_replay::b"},
                                      {kUndefined, "ev_replay::a"}};
  std::vector<Event> expected = {{kDefined, "ev_replay::a"}, {kDefined, "ev_replay::b"}};
  expected.insert(expected.end(), after_c.begin(), after_c.end());
  CHECK(replayed.events() == expected);
  CHECK(live.events() == after_c);
}

TEST_CASE("a subscriber that joins while threads define ops sees each op once", "[events]") {
  constexpr int kThreads = 4;
  constexpr int kOpsPerThread = 50;
  auto& d = Dispatcher::Get();
  std::vector<std::optional<Library>> libs(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    libs[t].emplace(Library::FRAGMENT, "ev_threads", std::nullopt, "e.cc", t);
  }
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++started;
      for (int i = 0; i < kOpsPerThread; ++i) {
        libs[t]->def(opreg::StrCat("op_", t, "_", i, "(Tensor x) -> Tensor"));
      }
    });
  }
  while (started.load() < kThreads) std::this_thread::yield();
  Heard heard("ev_threads");
  const uint64_t id = d.Subscribe(heard.Listener(), /*replay=*/true);  // mid-way
  for (std::thread& th : threads) th.join();
  std::map<std::string, int> seen;
  for (const Event& e : heard.events()) {
    REQUIRE(e.first == kDefined);
    ++seen[e.second];
  }
  CHECK(seen.size() == kThreads * kOpsPerThread);
  for (const auto& [name, count] : seen) {
    INFO(name);
    CHECK(count == 1);
  }
  d.Unsubscribe(id);
}

TEST_CASE("a subscriber may define ops; their events follow in order", "[events]") {
  auto& d = Dispatcher::Get();
  std::optional<Library> inner;
  Heard heard("ev_nested");
  const uint64_t definer =
      d.Subscribe([&](Dispatcher::OpEvent kind, const opreg::OperatorName& name) {
        if (kind == kDefined && name.str() == "ev_nested::outer") {
          inner.emplace(Library::FRAGMENT, "ev_nested", std::nullopt, "e.cc", 2);
          inner->def("inner(Tensor x) -> Tensor");  // from inside the delivery: no deadlock
        }
      }, /*replay=*/false);
  const uint64_t id = d.Subscribe(heard.Listener(), /*replay=*/false);
  {
    Library outer(Library::FRAGMENT, "ev_nested", std::nullopt, "e.cc", 1);
    outer.def("outer(Tensor x) -> Tensor");
    CHECK(heard.events() == std::vector<Event>{{kDefined, "ev_nested::outer"},
                                               {kDefined, "ev_nested::inner"}});
  }
  inner.reset();
  d.Unsubscribe(definer);
  d.Unsubscribe(id);
  CHECK(heard.events().back() == Event{kUndefined, "ev_nested::inner"});
}

}  // namespace
