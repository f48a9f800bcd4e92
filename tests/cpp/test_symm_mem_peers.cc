// A group's ranks check each other instead of trusting: ranks created with different options,
// and a malicious "rank" that joins the rendezvous with a heap too small, unsealed, or that
// tries to cut the victim's heap. Each case ends in an error naming the rank and the values, or
// in the attack failing, with no signal (a SIGBUS would show as exit code 128 + 7) and inside
// the group's timeout (ForkRanks' watchdog reports a hang as 99).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "fork_ranks.h"
#include "opreg/core/error.h"
#include "opreg/symm_mem/fd_exchange.h"
#include "opreg/symm_mem/store.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace sm = opreg::symm_mem;

namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/opreg_peers_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

sm::GroupOptions Options(size_t heap_bytes, int channels) {
  sm::GroupOptions o;
  o.heap_bytes = heap_bytes;
  o.max_channels = channels;
  o.timeout = std::chrono::seconds(5);
  return o;
}

// Rank 0, honest: creates the group and expects an error containing `expected` ("" when the
// group must come up), then writes its whole heap (a mapping past a cut memfd would SIGBUS).
int HonestRank(const std::string& dir, const sm::GroupOptions& opts, const std::string& expected) {
  try {
    auto g = sm::Group::Create("g", 0, 2, std::make_shared<sm::FileStore>(dir), opts);
    OPREG_CHILD_CHECK(expected.empty());
    auto h = g->Allocate(opts.heap_bytes / 2);
    std::memset(h->buffer_ptr(0), 0x5a, opts.heap_bytes / 2);
    return 0;
  } catch (const opreg::Error& e) {
    std::fprintf(stderr, "rank 0: %s\n", e.what());
    OPREG_CHILD_CHECK(!expected.empty());
    OPREG_CHILD_CHECK(std::string(e.what()).find(expected) != std::string::npos);
    return 0;
  }
}

// Rank 1, malicious: agrees on rank 0's parameters through the store as an honest rank would,
// then offers `heap` (a memfd it made) in the exchange and, with `cut`, tries to shrink the
// heap rank 0 sent it. Returns 0 when the shrink was refused (or not tried).
int MaliciousRank(const std::string& dir, const sm::GroupOptions& opts, int heap, bool cut) {
  sm::FileStore store(dir);
  store.Set("g/params/1", store.Get("g/params/0", opts.timeout));  // rank 0's, echoed
  std::vector<int> fds;
  try {
    fds = sm::ExchangeFds(store, "g/fds", 1, 2, heap, opts.timeout);
  } catch (const opreg::Error&) {
    return 0;  // rank 0 gave up first
  }
  if (!cut) return 0;
  const bool shrank = ftruncate(fds[0], 4096) == 0;
  // Then joins rank 0's first allocation (half the heap at offset 0) as an honest rank would,
  // so that rank 0 goes on to write all of it.
  store.Set("g/alloc/0/1", std::to_string(opts.heap_bytes / 2) + " 0");
  return shrank ? 1 : 0;
}

int Memfd(size_t bytes, bool seal) {
  const int fd = memfd_create("intruder", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) return -1;
  if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) return -1;
  return fd;
}

}  // namespace

TEST_CASE("ranks created with different heap sizes or channel counts fail, naming both",
          "[symm_mem][security]") {
  const std::string dir = TempDir();
  const std::vector<int> codes = opreg_test::ForkRanks(
      2,
      [&](int r) {
        const sm::GroupOptions opts = Options(1 << 20, r == 0 ? 32 : 64);
        try {
          sm::Group::Create("g", r, 2, std::make_shared<sm::FileStore>(dir), opts);
        } catch (const opreg::Error& e) {
          const std::string what = e.what();
          std::fprintf(stderr, "rank %d: %s\n", r, what.c_str());
          OPREG_CHILD_CHECK(what.find("disagree on the group's parameters") != std::string::npos);
          OPREG_CHILD_CHECK(what.find("max_channels=32") != std::string::npos);
          OPREG_CHILD_CHECK(what.find("max_channels=64") != std::string::npos);
          return 0;
        }
        return 1;
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});
  std::filesystem::remove_all(dir);
}

TEST_CASE("a peer with another memory layout (dtype sizes, byte order) is refused, naming both",
          "[symm_mem][security]") {
  const sm::GroupOptions opts = Options(1 << 20, 32);
  const std::string dir = TempDir();
  const std::vector<int> codes = opreg_test::ForkRanks(
      2,
      [&](int r) {
        if (r == 0) return HonestRank(dir, opts, "disagree on the group's parameters");
        // Rank 1 claims rank 0's parameters, except a dtype table whose first type (float32)
        // has 8-byte elements: it would read every float32 tensor of rank 0 wrongly.
        sm::FileStore store(dir);
        std::string params = store.Get("g/params/0", opts.timeout);
        const size_t at = params.find(".dtypes");
        if (at == std::string::npos) return 2;
        params[at + 7] = '8';
        store.Set("g/params/1", params);
        return 0;
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});
  std::filesystem::remove_all(dir);
}

TEST_CASE("a peer's heap that is too small or unsealed is refused before it is mapped",
          "[symm_mem][security]") {
  const sm::GroupOptions opts = Options(1 << 20, 32);
  for (const auto& [bytes, seal, expected] : std::vector<std::tuple<size_t, bool, std::string>>{
           {4096, true, "refusing the heap of rank 1: it holds 4096 bytes"},
           {size_t{1} << 20, false, "refusing the heap of rank 1: it is not sealed"}}) {
    INFO("peer heap of " << bytes << " bytes, sealed " << seal);
    const std::string dir = TempDir();
    const std::vector<int> codes = opreg_test::ForkRanks(
        2,
        [&](int r) {
          if (r == 0) return HonestRank(dir, opts, expected);
          return MaliciousRank(dir, opts, Memfd(bytes, seal), false);
        },
        30);
    CHECK(codes == std::vector<int>{0, 0});
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("a peer cannot shrink a rank's heap under its mapping", "[symm_mem][security]") {
  const sm::GroupOptions opts = Options(1 << 20, 32);
  const std::string dir = TempDir();
  const std::vector<int> codes = opreg_test::ForkRanks(
      2,
      [&](int r) {
        if (r == 0) return HonestRank(dir, opts, "");
        return MaliciousRank(dir, opts, Memfd(opts.heap_bytes, true), true);
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});  // rank 0 wrote its heap; rank 1's ftruncate failed
  std::filesystem::remove_all(dir);
}
