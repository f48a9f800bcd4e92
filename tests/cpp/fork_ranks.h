// Shared by the multi-process symm_mem tests: one forked process per rank, exit codes collected
// with a watchdog so a hung rank fails the test instead of hanging it.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

// In a rank process: a failed condition prints where and exits with code 3.
#define OPREG_CHILD_CHECK(cond)                                                            \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "rank check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::fflush(stderr);                                                                 \
      _exit(3);                                                                            \
    }                                                                                      \
  } while (0)

namespace opreg_test {

// Forks `world` processes running child(rank) and returns their exit codes: what child returned,
// 2 when it threw (the message goes to stderr), 128 + signal when a signal killed it, and 99
// when it was still running after `watchdog_s` seconds (it is then killed).
inline std::vector<int> ForkRanks(int world, const std::function<int(int)>& child, int watchdog_s) {
  std::vector<pid_t> pids;
  std::fflush(stdout);
  std::fflush(stderr);
  for (int r = 0; r < world; ++r) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        code = child(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
        code = 2;
      }
      std::fflush(stderr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(static_cast<size_t>(world), -1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(watchdog_s);
  for (int left = world; left > 0;) {
    for (int r = 0; r < world; ++r) {
      int status = 0;
      if (codes[r] == -1 && waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --left;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < world; ++r) {
        if (codes[r] == -1) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          codes[r] = 99;  // hung
        }
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return codes;
}

}  // namespace opreg_test
