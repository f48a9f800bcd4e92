// Group: registry, bootstrap (memfd per rank, fds exchanged with SCM_RIGHTS by fd_exchange.h,
// every heap mapped by every rank), the deterministic first-fit heap
// allocator with the drift check, and teardown of the store keys.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "opreg/core/dtype.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"
#include "opreg/symm_mem/fd_exchange.h"
#include "opreg/symm_mem/group_registry.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace opreg::symm_mem {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kAlign = 256;
// The seals every heap carries before it is sent (checked on every heap received).
constexpr int kHeapSeals = F_SEAL_SHRINK | F_SEAL_GROW;

size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

GroupRegistry<Group>& Registry() {
  static auto* r = new GroupRegistry<Group>("symm_mem", "group", "symm_mem::Group::Create");
  return *r;
}
// Every constructed group, for Find (which looks a pointer up across all of them).
std::mutex& LiveMu() {
  static std::mutex mu;
  return mu;
}
std::set<Group*>& LiveGroups() {  // guarded by LiveMu()
  static auto* s = new std::set<Group*>();
  return *s;
}

struct FdCloser {
  std::vector<int>* fds;
  ~FdCloser() {
    for (int fd : *fds) {
      if (fd >= 0) ::close(fd);
    }
  }
};

}  // namespace

Group::Group(std::string name, int rank, int world, std::shared_ptr<Store> store,
             GroupOptions options)
    : name_(std::move(name)),
      rank_(rank),
      world_(world),
      store_(std::move(store)),
      options_(options),
      bases_(static_cast<size_t>(world), nullptr) {
  pad_bytes_ =
      RoundUp(static_cast<size_t>(options_.max_channels) * world * sizeof(uint32_t), kAlign);
  options_.heap_bytes = RoundUp(options_.heap_bytes, 4096);
  free_[0] = options_.heap_bytes;
}

Group::~Group() {
  {
    std::lock_guard<std::mutex> lock(LiveMu());
    LiveGroups().erase(this);
  }
  for (char* b : bases_) {
    if (b != nullptr) ::munmap(b, options_.heap_bytes);
  }
}

std::shared_ptr<Group> Group::Create(std::string name, int rank, int world,
                                     std::shared_ptr<Store> store, GroupOptions options) {
  OPREG_CHECK_VALUE(!name.empty(), "symm_mem::Group::Create: empty group name");
  // Names become store keys, hence file names (255 bytes, escaped) in a FileStore.
  OPREG_CHECK_VALUE(name.size() <= 128, "symm_mem::Group::Create: the group name is ",
                    name.size(), " bytes long; at most 128 are allowed");
  OPREG_CHECK_VALUE(world >= 1 && rank >= 0 && rank < world, "symm_mem::Group::Create('", name,
                    "'): rank ", rank, " is not in [0, world ", world, ")");
  OPREG_CHECK_VALUE(store != nullptr, "symm_mem::Group::Create('", name, "'): null store");
  OPREG_CHECK_VALUE(options.max_channels >= 1, "symm_mem::Group::Create('", name,
                    "'): max_channels must be >= 1");
  Registry().CheckFree(name);  // before the bootstrap, which waits for the peers
  std::shared_ptr<Group> g(new Group(name, rank, world, std::move(store), options));
  g->Bootstrap();
  Registry().Insert(name, g);
  std::lock_guard<std::mutex> lock(LiveMu());
  LiveGroups().insert(g.get());
  return g;
}

void Group::Bootstrap() {
  const std::string who = StrCat("group '", name_, "' rank ", rank_);
  std::vector<int> fds(static_cast<size_t>(world_), -1);
  FdCloser closer{&fds};

  // 1. The group's parameters, agreed before anything is shared: ranks that disagree on the heap
  // size or the channel count would map past a peer's heap (SIGBUS) or index its signal pads
  // wrongly (silently wrong sums).
  if (world_ > 1) AgreeOnParameters(who);

  // 2. This rank's heap, sealed at its size before it is sent: no peer can shrink it under us
  // (a mapping past the end of a memfd is SIGBUS on the next access) or grow it.
  int memfd = ::memfd_create(StrCat("opreg_symm:", name_, ":", rank_).c_str(),
                             MFD_CLOEXEC | MFD_ALLOW_SEALING);
  OPREG_CHECK(memfd >= 0, "symm_mem: ", who, ": memfd_create failed: ", std::strerror(errno));
  fds[rank_] = memfd;
  OPREG_CHECK(::ftruncate(memfd, static_cast<off_t>(options_.heap_bytes)) == 0, "symm_mem: ", who,
              ": ftruncate(", options_.heap_bytes, ") failed: ", std::strerror(errno));
  OPREG_CHECK(::fcntl(memfd, F_ADD_SEALS, kHeapSeals | F_SEAL_SEAL) == 0, "symm_mem: ", who,
              ": sealing the heap failed: ", std::strerror(errno));

  // 3. Every peer's memfd (ExchangeFds: SCM_RIGHTS, senders' and owners' credentials checked),
  // each checked before it is mapped: a memfd of exactly the agreed size, sealed against
  // shrinking and growing.
  if (world_ > 1) {
    std::vector<int> peer_fds =
        ExchangeFds(*store_, Key("fds"), rank_, world_, memfd, options_.timeout);
    for (int r = 0; r < world_; ++r) {
      if (r != rank_) fds[r] = peer_fds[r];
    }
    for (int r = 0; r < world_; ++r) {
      if (r != rank_) CheckPeerHeap(who, r, fds[r]);
    }
  }

  // 4. Map every heap; the fds are closed by `closer` (the mappings keep the memory alive).
  for (int r = 0; r < world_; ++r) {
    void* p = ::mmap(nullptr, options_.heap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[r], 0);
    OPREG_CHECK(p != MAP_FAILED, "symm_mem: ", who, ": mapping the heap of rank ", r,
                " failed: ", std::strerror(errno));
    bases_[r] = static_cast<char*>(p);
  }
}

std::string Group::ParametersText() const {
  // The layout a peer's bytes are read with: allocation alignment, signal slot width, byte
  // order, pointer width and each dtype's element size in enum order (a peer built with another
  // dtype table would read tensors with the wrong element size, silently).
  std::string dtypes;
  for (int d = 0; d < kNumDTypes; ++d) dtypes += std::to_string(ItemSize(static_cast<DType>(d)));
  const bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
  return StrCat("heap_bytes=", options_.heap_bytes, " max_channels=", options_.max_channels,
                " world=", world_, " backend=host layout=align", kAlign, ".slot",
                sizeof(uint32_t), ".", little ? "le" : "be", ".ptr", sizeof(void*),
                ".dtypes", dtypes);
}

void Group::AgreeOnParameters(const std::string& who) {
  const std::string mine = ParametersText();
  const std::string prefix = Key("params/");
  store_->Set(StrCat(prefix, rank_), mine);
  store_->WaitRanks(prefix, world_, rank_, options_.timeout,
                    StrCat("symm_mem ", who, " agreeing on the group's parameters"));
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    const std::string theirs = store_->Get(StrCat(prefix, r), options_.timeout);
    OPREG_CHECK(theirs == mine, "symm_mem: ", who,
                ": the ranks disagree on the group's "
                "parameters: rank ",
                rank_, " has ", mine, ", rank ", r, " has ", theirs,
                "; every rank must create the group with the same options");
  }
}

void Group::CheckPeerHeap(const std::string& who, int r, int fd) const {
  struct stat st {};
  OPREG_CHECK(::fstat(fd, &st) == 0, "symm_mem: ", who, ": fstat of rank ", r,
              "'s heap failed: ", std::strerror(errno));
  OPREG_CHECK(S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) == options_.heap_bytes,
              "symm_mem: ", who, ": refusing the heap of rank ", r, ": it holds ", st.st_size,
              " bytes", S_ISREG(st.st_mode) ? "" : " and is not a memory file", ", not the ",
              options_.heap_bytes, " bytes the group agreed on");
  const int seals = ::fcntl(fd, F_GET_SEALS);
  OPREG_CHECK(seals >= 0 && (seals & kHeapSeals) == kHeapSeals, "symm_mem: ", who,
              ": refusing the heap of rank ", r,
              ": it is not sealed against shrinking and "
              "growing (seals ",
              seals, "), so that rank could cut it under this one's mapping");
}

std::shared_ptr<Group> Group::Get(std::string_view name) { return Registry().Get(name); }

bool Group::Exists(std::string_view name) { return Registry().Exists(name); }

void Group::Destroy(std::string_view name) {
  Registry().Remove(name, "symm_mem::Group::Destroy")->Teardown();
}

void Group::Teardown() {
  // Phase 1: everyone arrives (after which nobody reads this group's keys any more); then each
  // rank removes its own keys. Phase 2: the last rank to count out removes the counter.
  Store& s = *store_;
  const std::string counter = Key("teardown");
  bool all_arrived = true;
  if (world_ > 1) {
    s.Add(counter, 1);
    const auto deadline = DeadlineAfter(options_.timeout);
    std::chrono::microseconds delay(50);
    while (s.Add(counter, 0) < world_) {
      if (Clock::now() >= deadline) {
        all_arrived = false;
        Logger().warn(
            "symm_mem: group '{}' rank {}: not every rank reached Destroy within {} ms;"
            " removing this rank's store keys anyway",
            name_, rank_, options_.timeout.count());
        break;
      }
      std::this_thread::sleep_for(delay);
      delay = std::min<std::chrono::microseconds>(delay * 2, std::chrono::microseconds(5000));
    }
  }
  if (next_alloc_id_ > 0) s.Delete(Key(StrCat("alloc/", next_alloc_id_ - 1, "/", rank_)));
  if (world_ > 1) s.Delete(Key(StrCat("params/", rank_)));
  if (world_ > 1 && all_arrived && s.Add(counter, 1) == 2 * world_) s.Delete(counter);
}

std::shared_ptr<SymmetricMemory> Group::Allocate(size_t nbytes) {
  std::lock_guard<std::mutex> alloc_lock(alloc_mu_);
  const size_t block = pad_bytes_ + RoundUp(std::max<size_t>(nbytes, 1), kAlign);
  size_t offset = 0;
  int64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(free_.begin(), free_.end(),
                           [&](const auto& kv) { return kv.second >= block; });
    if (it == free_.end()) {
      size_t largest = 0;
      for (const auto& kv : free_) largest = std::max(largest, kv.second);
      OPREG_THROW(kRuntime, "symm_mem: the symmetric heap of group '", name_,
                  "' is exhausted: allocation of ", nbytes, " bytes needs ", block,
                  " bytes, the largest free block has ", largest, " (heap_bytes ",
                  options_.heap_bytes, ")");
    }
    offset = it->first;
    const size_t left = it->second - block;
    free_.erase(it);
    if (left > 0) free_[offset + block] = left;
    id = next_alloc_id_++;
  }
  auto handle = std::make_shared<SymmetricMemory>(shared_from_this(), offset, block, nbytes, id);
  std::memset(handle->signal_pad(rank_), 0, pad_bytes_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_[offset] = handle;
  }
  if (world_ > 1) {
    // Rendezvous: every rank publishes (size, offset) of allocation #id and compares.
    const std::string mine = StrCat(nbytes, " ", offset);
    store_->Set(Key(StrCat("alloc/", id, "/", rank_)), mine);
    store_->WaitRanks(
        Key(StrCat("alloc/", id, "/")), world_, rank_, options_.timeout,
        StrCat("symm_mem group '", name_, "' allocation #", id, " (", nbytes, " bytes)"));
    std::vector<std::pair<size_t, size_t>> all(static_cast<size_t>(world_));
    for (int r = 0; r < world_; ++r) {
      std::string v = r == rank_ ? mine : store_->Get(Key(StrCat("alloc/", id, "/", r)), Millis(0));
      unsigned long long sz = 0, off = 0;
      std::sscanf(v.c_str(), "%llu %llu", &sz, &off);
      all[r] = {static_cast<size_t>(sz), static_cast<size_t>(off)};
    }
    if (id > 0) store_->Delete(Key(StrCat("alloc/", id - 1, "/", rank_)));
    for (int r = 1; r < world_; ++r) {
      if (all[r].first != all[0].first) {
        OPREG_THROW(kRuntime, "symm_mem: allocation drift in group '", name_, "': rank ", r,
                    " allocated ", all[r].first, " bytes as allocation #", id,
                    " but rank 0 allocated ", all[0].first,
                    " bytes (every rank must allocate the same sizes in the same order)");
      }
      if (all[r].second != all[0].second) {
        OPREG_THROW(kRuntime, "symm_mem: allocation drift in group '", name_, "': rank ", r,
                    " placed allocation #", id, " at heap offset ", all[r].second,
                    " but rank 0 at ", all[0].second,
                    " (every rank must allocate and free in the same order)");
      }
    }
  }
  return handle;
}

size_t Group::live_allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}

void Group::Free(size_t offset, size_t block_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(offset);
  auto [it, inserted] = free_.emplace(offset, block_bytes);
  (void)inserted;
  auto next = std::next(it);
  if (next != free_.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free_.erase(next);
  }
  if (it != free_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free_.erase(it);
    }
  }
}

std::shared_ptr<SymmetricMemory> Group::Find(const void* ptr) {
  const char* p = static_cast<const char*>(ptr);
  // Declared before the locks: if this is the last reference, it dies after they are released
  // (its destructor locks the group).
  std::shared_ptr<SymmetricMemory> h;
  std::lock_guard<std::mutex> lock(LiveMu());
  for (Group* g : LiveGroups()) {
    const char* base = g->bases_[g->rank_];
    if (base == nullptr || p < base || p >= base + g->options_.heap_bytes) continue;
    const size_t off = static_cast<size_t>(p - base);
    std::lock_guard<std::mutex> glock(g->mu_);
    auto it = g->live_.upper_bound(off);
    if (it == g->live_.begin()) return nullptr;
    --it;
    h = it->second.lock();
    if (h == nullptr) return nullptr;
    if (off < it->first + g->pad_bytes_ || off >= it->first + h->block_bytes_) return nullptr;
    return h;
  }
  return nullptr;
}

}  // namespace opreg::symm_mem
