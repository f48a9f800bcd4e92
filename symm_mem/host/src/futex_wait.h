// Internal: the waiting primitives of the signal pads (SymmetricMemory's put/wait_signal in
// host_heap.cc and the collectives' barrier in collectives.cc). The words live in memory mapped
// by several processes, so the futex calls are the shared (not _PRIVATE) forms.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

namespace opreg::symm_mem::detail {

// Wakes every futex waiter on *addr.
inline void FutexWake(uint32_t* addr) {
  ::syscall(SYS_futex, addr, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

// Sleeps (up to `wait`) while *addr == value; returns early on a wake-up, a signal or a change.
inline void FutexWait(uint32_t* addr, uint32_t value, std::chrono::nanoseconds wait) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(wait.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(wait.count() % 1000000000);
  ::syscall(SYS_futex, addr, FUTEX_WAIT, value, &ts, nullptr, 0);
}

// A spin-wait hint to the CPU (pause / yield).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace opreg::symm_mem::detail
