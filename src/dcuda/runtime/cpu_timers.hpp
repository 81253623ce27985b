// The host end of dcuda's CPU timers (dcuda_start_cpu_timer, dcuda_stop_cpu_timer): the device's
// rank 0 posts start and stop events into page-locked host memory (detail/layout.hpp,
// RankHost::timer) and the host, polling while the kernel runs, takes the CPU's time as it sees
// each one. A stop's time since the last start (the reference's words: two stops after one start
// both measure from it) is one result, in milliseconds, kept in order for dcuda_host_get_timings. As in the reference, the CPU measures, so the figures do not depend on
// the GPU's clocks; what a poll costs bounds the precision (a few microseconds).
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

#include "dcuda/detail/layout.hpp"

namespace dcuda::runtime {

class CpuTimers {
 public:
  explicit CpuTimers(detail::RankHost* rank0) : rank0_(rank0) {}

  // Takes every event posted so far (the host's loop while a kernel runs, and once after it).
  // Returns how many.
  uint32_t poll();
  const std::vector<double>& results() const { return results_; }
  // Stops before any start are counted here, not as results.
  uint64_t unmatched_stops() const { return unmatched_; }

 private:
  detail::RankHost* rank0_;
  uint32_t next_ = 0;  // the next event's position
  bool started_ = false;
  std::chrono::steady_clock::time_point start_;
  std::vector<double> results_;
  uint64_t unmatched_ = 0;
};

}  // namespace dcuda::runtime
