// The host end of dcuda's CPU timers on the CPU: a thread plays the device's rank 0 (posting start
// and stop events the way dcuda_device.cuh does), the host polls, and each stop's time since the
// last start comes out in milliseconds, in order; the ring's slots are reused once taken.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "dcuda/detail/sync.hpp"
#include "dcuda/runtime/cpu_timers.hpp"

using namespace dcuda;
using detail::RankHost;

namespace {

// What rank 0's thread 0 does in dcuda_start_cpu_timer / dcuda_stop_cpu_timer; false when the
// host has not taken enough events to free a slot (the device waits then).
bool post(RankHost& h, uint32_t& next, bool stop) {
  if (next - detail::load_acquire(&h.timer_taken) >= detail::kTimerSlots) return false;
  detail::TimerEvent& e = h.timer[next % detail::kTimerSlots];
  e.stop = stop ? 1 : 0;
  detail::store_release(&e.seq, next + 1);
  ++next;
  return true;
}

TEST(CpuTimers, StopsMeasureFromTheLastStartInMilliseconds) {
  auto h = std::make_unique<RankHost>();
  runtime::CpuTimers timers(h.get());
  uint32_t next = 0;
  EXPECT_EQ(timers.poll(), 0u);
  ASSERT_TRUE(post(*h, next, false));
  EXPECT_EQ(timers.poll(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(post(*h, next, true));
  EXPECT_EQ(timers.poll(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(post(*h, next, true));  // a second stop: from the same start
  timers.poll();
  ASSERT_EQ(timers.results().size(), 2u);
  EXPECT_GE(timers.results()[0], 19.0);
  EXPECT_LT(timers.results()[0], 1000.0);
  EXPECT_GE(timers.results()[1], timers.results()[0] + 9.0);
  EXPECT_EQ(timers.unmatched_stops(), 0u);
}

TEST(CpuTimers, AStopBeforeAnyStartIsNoResult) {
  auto h = std::make_unique<RankHost>();
  runtime::CpuTimers timers(h.get());
  uint32_t next = 0;
  ASSERT_TRUE(post(*h, next, true));
  timers.poll();
  EXPECT_TRUE(timers.results().empty());
  EXPECT_EQ(timers.unmatched_stops(), 1u);
}

// More events than the ring holds: the poster waits for the host to take them, nothing is lost.
TEST(CpuTimers, ManyEventsGoThroughTheRingInOrder) {
  auto h = std::make_unique<RankHost>();
  runtime::CpuTimers timers(h.get());
  const uint32_t pairs = 10 * detail::kTimerSlots;
  std::thread device([&] {
    uint32_t next = 0;
    for (uint32_t i = 0; i < 2 * pairs; ++i)
      while (!post(*h, next, i % 2 == 1)) std::this_thread::yield();
  });
  while (timers.results().size() < pairs) timers.poll();
  device.join();
  timers.poll();
  EXPECT_EQ(timers.results().size(), pairs);
  for (double ms : timers.results()) EXPECT_GE(ms, 0.0);
}

}  // namespace
