// A session's writes the native platform holds at once (backends/opencl/write_gate.hpp): a write
// beyond the bound waits for earlier ones, but never for good.
#include "backends/opencl/write_gate.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

namespace outboard::backends {
namespace {

using namespace std::chrono_literals;

TEST(WriteGate, AWriteBeyondTheBoundWaitsForAnEarlierOne) {
  std::atomic<uint64_t> waits{0};
  auto gate = std::make_shared<WriteGate>(100, waits);
  auto first = gate->admit(60);
  auto second = gate->admit(40);  // fits exactly
  EXPECT_EQ(gate->in_flight(), 100u);
  auto third = std::async(std::launch::async, [&] { return gate->admit(50); });
  EXPECT_EQ(third.wait_for(50ms), std::future_status::timeout);
  first.reset();  // the first write completed
  auto held = third.get();
  EXPECT_EQ(gate->in_flight(), 90u);
  EXPECT_EQ(waits.load(), 1u);
}

TEST(WriteGate, OneWriteLargerThanTheBoundGoesWhenNothingIsInFlight) {
  std::atomic<uint64_t> waits{0};
  auto gate = std::make_shared<WriteGate>(100, waits);
  auto huge = gate->admit(1000);
  EXPECT_EQ(gate->in_flight(), 1000u);
  huge.reset();
  EXPECT_EQ(gate->in_flight(), 0u);
  EXPECT_EQ(waits.load(), 0u);
}

TEST(WriteGate, NoBoundNeverWaits) {
  std::atomic<uint64_t> waits{0};
  auto gate = std::make_shared<WriteGate>(0, waits);
  auto a = gate->admit(1ull << 40), b = gate->admit(1ull << 40);
  EXPECT_EQ(waits.load(), 0u);
}

// An earlier write held back by a user event that a later command of the session sets: the
// session's thread goes on after the patience, and waits no more until everything has drained.
TEST(WriteGate, APatienceEndsTheWaitThenNoneUntilDrained) {
  std::atomic<uint64_t> waits{0};
  auto gate = std::make_shared<WriteGate>(100, waits);
  auto stuck = gate->admit(100);
  const auto t0 = std::chrono::steady_clock::now();
  auto next = gate->admit(100);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, WriteGate::kPatience);
  const auto t1 = std::chrono::steady_clock::now();
  auto more = gate->admit(100);  // no second wait
  EXPECT_LT(std::chrono::steady_clock::now() - t1, WriteGate::kPatience / 2);
  EXPECT_EQ(waits.load(), 1u);
  stuck.reset(), next.reset(), more.reset();
  auto again = gate->admit(100);
  auto waiting = std::async(std::launch::async, [&] { return gate->admit(100); });
  EXPECT_EQ(waiting.wait_for(50ms), std::future_status::timeout);  // drained: patient again
  again.reset();
  waiting.get();
  EXPECT_EQ(waits.load(), 2u);
}

}  // namespace
}  // namespace outboard::backends
