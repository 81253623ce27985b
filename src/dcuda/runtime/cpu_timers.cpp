#include "dcuda/runtime/cpu_timers.hpp"

#include "dcuda/detail/sync.hpp"

namespace dcuda::runtime {

uint32_t CpuTimers::poll() {
  uint32_t taken = 0;
  for (;;) {
    detail::TimerEvent& e = rank0_->timer[next_ % detail::kTimerSlots];
    if (__atomic_load_n(&e.seq, __ATOMIC_ACQUIRE) != next_ + 1) break;
    const auto now = std::chrono::steady_clock::now();  // first: the event's time is when it is seen
    if (e.stop) {
      if (started_) results_.push_back(std::chrono::duration<double, std::milli>(now - start_).count());
      else ++unmatched_;  // the time since the last start: a second stop measures from it too
    } else {
      start_ = now;
      started_ = true;
    }
    ++next_;
    ++taken;
    __atomic_store_n(&rank0_->timer_taken, next_, __ATOMIC_RELEASE);  // the slot may be reused
  }
  return taken;
}

}  // namespace dcuda::runtime
