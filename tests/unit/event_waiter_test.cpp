// The OpenCL backend's event waiter, both ways (event_waiter.hpp), on the host's real OpenCL
// platform (PoCL in CI) with user events the test sets: each watched event (host copies too) is
// reported once, with its status, after it ended; polling reports a later event while an earlier
// one still waits.
#include "backends/opencl/event_waiter.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "opencl_context_test.hpp"

namespace outboard::backends {
namespace {

using Mode = EventWaiter::Mode;

// The context, and user events in it.
class EventWaiterContext : public OpenClContextTest {
 protected:
  cl_event user_event() {
    cl_int rc = CL_SUCCESS;
    cl_event e = clCreateUserEvent(context_, &rc);
    EXPECT_EQ(rc, CL_SUCCESS);
    return e;
  }
  // Waits up to 10 s for `flag` to be set.
  static bool eventually(const std::atomic<int>& flag) {
    for (int i = 0; i < 10000 && flag.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return flag.load() != 0;
  }
};

class EventWaiterTest : public EventWaiterContext, public ::testing::WithParamInterface<Mode> {};

TEST_P(EventWaiterTest, ReportsCompletionOnceWithItsStatus) {
  EventWaiter waiter(GetParam());
  EXPECT_EQ(waiter.reports_alone(false), GetParam() == Mode::polling);
  EXPECT_FALSE(waiter.reports_alone(true));  // host copies: a blocking wait, and the callback
  cl_event e = user_event();
  std::atomic<int> calls{0}, status{1};
  waiter.watch(e, [&](cl_int s) {
    status = s;
    ++calls;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(calls.load(), 0) << "reported before the event ended";
  ASSERT_EQ(clSetUserEventStatus(e, CL_COMPLETE), CL_SUCCESS);
  ASSERT_TRUE(eventually(calls));
  EXPECT_EQ(status.load(), CL_COMPLETE);
  clReleaseEvent(e);  // the waiter retained its own
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(calls.load(), 1);
}

TEST_P(EventWaiterTest, ReportsAHostCopyToo) {
  EventWaiter waiter(GetParam());
  cl_event e = user_event();
  std::atomic<int> calls{0}, status{1};
  waiter.watch(
      e,
      [&](cl_int s) {
        status = s;
        ++calls;
      },
      /*host_copy=*/true);
  ASSERT_EQ(clSetUserEventStatus(e, CL_COMPLETE), CL_SUCCESS);
  ASSERT_TRUE(eventually(calls));
  EXPECT_EQ(status.load(), CL_COMPLETE);
  clReleaseEvent(e);
}

TEST_P(EventWaiterTest, ReportsAFailureAsItsNegativeStatus) {
  EventWaiter waiter(GetParam());
  cl_event e = user_event();
  std::atomic<int> calls{0}, status{1};
  waiter.watch(e, [&](cl_int s) {
    status = s;
    ++calls;
  });
  ASSERT_EQ(clSetUserEventStatus(e, -5), CL_SUCCESS);
  ASSERT_TRUE(eventually(calls));
  EXPECT_EQ(status.load(), -5);
  clReleaseEvent(e);
}

// Polling looks at every watched event: one that waits for its user event holds up no other.
TEST_F(EventWaiterContext, PollingHoldsUpNoLaterEventBehindAnEarlierOne) {
  cl_event first = user_event(), second = user_event();
  std::atomic<int> first_done{0}, second_done{0};
  {
    EventWaiter waiter(Mode::polling);
    waiter.watch(first, [&](cl_int) { first_done = 1; });
    waiter.watch(second, [&](cl_int) { second_done = 1; });
    // Past the busy first 2 ms, into the paced polling.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(clSetUserEventStatus(second, CL_COMPLETE), CL_SUCCESS);
    EXPECT_TRUE(eventually(second_done));
    EXPECT_EQ(first_done.load(), 0);
    ASSERT_EQ(clSetUserEventStatus(first, CL_COMPLETE), CL_SUCCESS);
  }  // the destructor waits for what is still watched
  EXPECT_EQ(first_done.load(), 1);
  clReleaseEvent(first);
  clReleaseEvent(second);
}

INSTANTIATE_TEST_SUITE_P(BothWays, EventWaiterTest, ::testing::Values(Mode::polling, Mode::blocking),
                         [](const auto& info) { return info.param == Mode::polling ? "polling" : "blocking"; });

}  // namespace
}  // namespace outboard::backends
