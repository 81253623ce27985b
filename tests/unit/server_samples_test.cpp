// What `outboard bench soak` watches of a server: /proc figures of a live process, and the
// first-vs-last-third trend that tells a steady leak from noise, a one-time fill and a spike.
#include <gtest/gtest.h>
#include <unistd.h>

#include "bench/server_samples.hpp"
#include "common/clock.hpp"

using namespace outboard::bench;
using outboard::now_ns;

TEST(ServerSamples, ReadsALiveProcess) {
  auto p = read_process(getpid());
  ASSERT_TRUE(p);
  EXPECT_GT(p->rss_bytes, 1 << 20);
  EXPECT_GE(p->fds, 3);  // stdin, stdout, stderr at least
  EXPECT_GE(p->threads, 1);
}

TEST(ServerSamples, CountsCpuTime) {
  auto before = read_process(getpid());
  ASSERT_TRUE(before);
  const uint64_t until = now_ns() + 300'000'000;
  volatile uint64_t spin = 0;
  while (now_ns() < until) spin = spin + 1;  // 0.3 s on a core
  auto after = read_process(getpid());
  ASSERT_TRUE(after);
  EXPECT_GT(after->cpu_seconds - before->cpu_seconds, 0.1);  // the clock ticks at 100 Hz
  EXPECT_LT(after->cpu_seconds - before->cpu_seconds, 1.0);
}

TEST(ServerSamples, NothingForAMissingProcess) { EXPECT_FALSE(read_process(999999999)); }

TEST(ServerSamples, TrendNeedsThreeValues) {
  EXPECT_FALSE(thirds_trend({}));
  EXPECT_FALSE(thirds_trend({1, 2}));
  auto t = thirds_trend({1, 2, 3});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->first, 1);
  EXPECT_EQ(t->last, 3);
}

TEST(ServerSamples, SteadyGrowthShows) {
  std::vector<double> v;
  for (int i = 0; i < 90; ++i) v.push_back(100 + i);  // one unit a sample
  auto t = thirds_trend(v);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->first, 114.5);  // median of 100..129
  EXPECT_DOUBLE_EQ(t->last, 174.5);   // of 160..189
  EXPECT_DOUBLE_EQ(t->growth(), 60);
  EXPECT_EQ(t->values, 90u);
}

TEST(ServerSamples, NoiseAndASpikeDoNot) {
  std::vector<double> v;
  for (int i = 0; i < 60; ++i) v.push_back(i % 2 ? 101 : 99);
  v[55] = 10000;  // one sample taken in a burst
  auto t = thirds_trend(v);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->growth(), 0);
}
