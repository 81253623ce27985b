// Wrap-safe notification counting (dcuda/detail/counters.hpp) at and across 2^32.
#include <gtest/gtest.h>

#include <cstdint>

#include "dcuda/detail/counters.hpp"

using namespace dcuda::detail;

TEST(DcudaCounters, WaitingCountsBothWritersAcrossTheWrap) {
  EXPECT_EQ(waiting(0, 0, 0), 0u);
  EXPECT_EQ(waiting(3, 4, 2), 5u);
  // The device counter wrapped (2^32 + 1), the network one did not, consumed did not: 2^32 + 6 - (2^32 - 3).
  EXPECT_EQ(waiting(1, 5, UINT32_MAX - 2), 9u);
  // All three past the wrap.
  EXPECT_EQ(waiting(2, 3, UINT32_MAX), 6u);  // consumed is one short of the wrap, both counters past it
  EXPECT_EQ(waiting(UINT32_MAX - 1, 10, UINT32_MAX - 5), 14u);
  // More consumed than arrived (cannot happen; never reads as a huge count).
  EXPECT_EQ(waiting(1, 1, 5), 0u);
}

TEST(DcudaCounters, ReachedIsASignedDistance) {
  EXPECT_TRUE(reached(5, 5));
  EXPECT_TRUE(reached(6, 5));
  EXPECT_FALSE(reached(4, 5));
  EXPECT_TRUE(reached(2, UINT32_MAX - 1));   // 2 is 4 past UINT32_MAX - 1
  EXPECT_FALSE(reached(UINT32_MAX - 1, 2));
  EXPECT_TRUE(reached(0x7fffffffu, 0));      // 2^31 - 1 ahead: still ahead
  EXPECT_FALSE(reached(0x80000000u, 0));     // 2^31 apart: read as behind (the documented limit)
}

TEST(DcudaCounters, TakeConsumesOnlyWhatArrivedAcrossTheWrap) {
  uint32_t consumed = UINT32_MAX - 1;
  uint32_t network = UINT32_MAX - 1;
  EXPECT_FALSE(take(0, network, consumed, 1));
  network += 3;  // wraps to 1
  EXPECT_TRUE(take(0, network, consumed, 2));
  EXPECT_EQ(consumed, 0u);
  EXPECT_FALSE(take(0, network, consumed, 2));
  EXPECT_TRUE(take(0, network, consumed, 1));
  EXPECT_EQ(consumed, 1u);
  EXPECT_FALSE(take(0, network, consumed, 1));
  EXPECT_TRUE(take(4, network, consumed, 4));  // the device's notifications count too
  EXPECT_TRUE(take(4, network, consumed, 0));
}
