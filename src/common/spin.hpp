// Polling before sleeping. A thread woken through a condition variable or a futex starts some
// microseconds later (~5-20 us on the VMs we measure), and a remote OpenCL command passes several
// such threads. Where cores are to spare, a thread that expects more work soon polls for a while
// first; where they are not (the 2-core CI machine), its polling would take the core the work
// itself needs (measured there: the remote round trip of an empty kernel doubled).
#pragma once
#include <cstdint>
#include <thread>

#include "common/clock.hpp"

namespace outboard {

// A spin-wait hint, `times` over: the core idles briefly (~40 ns each on x86) without a system call.
inline void pause_core(int times) {
  for (int i = 0; i < times; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

// How long a service thread polls for its next work item before it sleeps: 100 us with at least
// 8 hardware threads, else 0.
inline uint64_t spare_core_poll_ns() {
  static const uint64_t ns = std::thread::hardware_concurrency() >= 8 ? 100'000 : 0;
  return ns;
}

// How long a remote OpenCL session polls, at most, while a command it waits for is under way
// (the event waiter's status polls, the session's threads' polls for work); then paced or asleep.
constexpr uint64_t kCommandPollNs = 2'000'000;

// Polls `ready` until `idle_ns` have passed since `busy` (work under way that more work follows)
// was last true, and for `cap_ns` at most; whether it became true.
template <class Ready, class Busy>
bool poll_while_busy(Ready&& ready, Busy&& busy, uint64_t idle_ns, uint64_t cap_ns) {
  if (idle_ns == 0) return ready();
  const uint64_t start = now_ns();
  uint64_t last_busy = start;
  for (;;) {
    if (ready()) return true;
    const uint64_t now = now_ns();
    if (busy()) last_busy = now;
    if (now - last_busy >= idle_ns || now - start >= cap_ns) return ready();
    pause_core(16);
  }
}

// Polls `ready` for up to `ns`; whether it became true.
template <class Ready>
bool poll_for(Ready&& ready, uint64_t ns) {
  if (ns == 0) return ready();
  const uint64_t end = now_ns() + ns;
  do {
    if (ready()) return true;
    pause_core(16);
  } while (now_ns() < end);
  return ready();
}

}  // namespace outboard
