// The traces' duration histogram (common/latency_histogram.hpp).
#include "common/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

using outboard::LatencyHistogram;

TEST(LatencyHistogram, PercentilesAreReadToWithinABucket) {
  LatencyHistogram h;
  EXPECT_EQ(h.quantile(0.5), 0u);
  for (uint64_t us = 1; us <= 1000; ++us) h.add(us * 1000);
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.max(), 1'000'000u);
  for (const auto& [q, exact] : {std::pair{0.5, 500'000.0}, {0.9, 900'000.0}, {0.99, 990'000.0}}) {
    EXPECT_LE(static_cast<double>(h.quantile(q)), exact) << q;
    EXPECT_GE(static_cast<double>(h.quantile(q)), exact * (1 - 1.0 / 16)) << q;
  }
  for (uint64_t v : {uint64_t(0), uint64_t(15), uint64_t(16), uint64_t(17), uint64_t(1000), uint64_t(1) << 40, ~uint64_t(0)}) {
    const uint32_t b = LatencyHistogram::bucket(v);
    ASSERT_LT(b, LatencyHistogram::kBuckets) << v;
    EXPECT_LE(LatencyHistogram::bucket_floor(b), v) << v;
    if (b + 1 < LatencyHistogram::kBuckets) {
      EXPECT_GT(LatencyHistogram::bucket_floor(b + 1), v) << v;
    }
  }
}
