// The NetPIPE method's pieces: sizes with perturbations, repeat counts from the last point, the
// minimum over trials, the NetPIPE output format, and the streaming window by message size.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "bench/net_bench.hpp"
#include "bench/sweep.hpp"
#include "common/error.hpp"

using namespace outboard;
using namespace outboard::bench;

TEST(SweepSizes, CentresAndPerturbations) {
  SweepOptions o;
  o.min_bytes = 1;
  o.max_bytes = 64;
  o.perturbation = 3;
  auto s = sweep_sizes(o);
  // Centres 1, 2, 4, ..., 64 and their neighbours c-3, c+3 where in range.
  std::set<uint64_t> expected = {1, 2, 4, 5, 7, 8, 11, 13, 16, 19, 29, 32, 35, 61, 64};
  for (uint64_t c : {1, 2}) expected.insert(c + 3);
  EXPECT_EQ(std::set<uint64_t>(s.begin(), s.end()), expected);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(s.size(), expected.size());  // no duplicates
  EXPECT_EQ(s.front(), 1u);
  EXPECT_EQ(s.back(), 64u);  // 67 is beyond max_bytes
}

TEST(SweepSizes, WithoutPerturbationOnlyPowersOfTwo) {
  SweepOptions o;
  o.min_bytes = 1;
  o.max_bytes = 1 << 20;
  o.perturbation = 0;
  auto s = sweep_sizes(o);
  ASSERT_EQ(s.size(), 21u);
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(s[i], 1ull << i);
}

TEST(SweepSizes, StepsPerOctaveAndBounds) {
  SweepOptions o;
  o.min_bytes = 1000;
  o.max_bytes = 1 << 20;
  o.perturbation = 0;
  o.steps_per_octave = 4;
  auto s = sweep_sizes(o);
  for (uint64_t v : s) {
    EXPECT_GE(v, 1000u);
    EXPECT_LE(v, 1u << 20);
  }
  EXPECT_EQ(s.back(), 1u << 20);  // the largest size is always measured
  // A quarter octave apart, but for the last step to the (clamped) largest size.
  for (size_t i = 1; i + 1 < s.size(); ++i) EXPECT_NEAR(double(s[i]) / double(s[i - 1]), 1.19, 0.05);
  o.min_bytes = 0;
  EXPECT_THROW(sweep_sizes(o), Error);
  o.min_bytes = 10;
  o.max_bytes = 5;
  EXPECT_THROW(sweep_sizes(o), Error);
}

TEST(Repeats, FillTheTargetTime) {
  EXPECT_EQ(repeats_for(0.001, 0.25, 1000000), 250u);
  EXPECT_EQ(repeats_for(1.0, 0.25, 1000000), 1u);  // never fewer than one
  EXPECT_EQ(repeats_for(1e-9, 0.25, 1000), 1000u);  // capped
  EXPECT_EQ(repeats_for(0, 0.25, 1000), 1u);        // no measurement yet
}

TEST(RunSweep, KeepsTheMinimumOverTrialsAndScalesRepeats) {
  SweepOptions o;
  o.min_bytes = 1024;
  o.max_bytes = 4096;
  o.perturbation = 0;
  o.trials = 5;
  o.target_seconds = 0.01;
  std::map<uint64_t, int> calls;
  std::map<uint64_t, uint64_t> repeats_seen;
  // A fake transfer: 1 us per KiB, and every trial but the third is disturbed (twice as slow).
  auto measure = [&](uint64_t bytes, uint64_t repeats) {
    int n = calls[bytes]++;
    repeats_seen[bytes] = repeats;
    double t = bytes / 1024.0 * 1e-6;
    return (n == 3) ? t : 2 * t;  // calls 0 and 1 calibrate the first point
  };
  size_t progress_calls = 0;
  auto points = run_sweep(o, measure, [&](const Point&, size_t i, size_t n) {
    EXPECT_EQ(n, 3u);
    EXPECT_EQ(i, progress_calls++);
  });
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(progress_calls, 3u);
  EXPECT_DOUBLE_EQ(points[0].seconds, 1e-6);   // the undisturbed trial wins
  EXPECT_DOUBLE_EQ(points[1].seconds, 2e-6);
  EXPECT_EQ(calls[1024], 2 + o.trials);        // warm-up, calibration, trials
  EXPECT_EQ(calls[2048], o.trials);
  // Repeats follow the previous point: 0.01 s / (1 us * size ratio 2) for the second point.
  EXPECT_EQ(repeats_seen[2048], 5000u);
  EXPECT_DOUBLE_EQ(points[2].mib_per_s(), 4096 / points[2].seconds / (1 << 20));
}

TEST(NetpipeFormat, ThreeColumnsPerPoint) {
  std::vector<Point> pts = {{1, 10, 1e-6}, {1024, 5, 2e-6}};
  std::string path = ::testing::TempDir() + "/np.out";
  write_netpipe(path, pts);
  std::ifstream in(path);
  uint64_t bytes;
  double mbps, seconds;
  ASSERT_TRUE(in >> bytes >> mbps >> seconds);
  EXPECT_EQ(bytes, 1u);
  EXPECT_NEAR(mbps, 8.0, 1e-6);  // 1 byte per microsecond = 8 Mbps
  EXPECT_NEAR(seconds, 1e-6, 1e-12);
  ASSERT_TRUE(in >> bytes >> mbps >> seconds);
  EXPECT_EQ(bytes, 1024u);
  EXPECT_FALSE(in >> bytes);
  std::remove(path.c_str());
}

TEST(StreamingWindow, ByMessageSizeUnlessRequested) {
  EXPECT_EQ(streaming_window(1, 0), 1024);     // small messages: the most
  EXPECT_EQ(streaming_window(0, 0), 1024);     // an empty message counts as one byte
  EXPECT_EQ(streaming_window(8192, 0), 1024);  // ~8 MiB worth
  EXPECT_EQ(streaming_window(16384, 0), 512);
  EXPECT_EQ(streaming_window(65536, 0), 128);
  EXPECT_EQ(streaming_window(1 << 20, 0), 64);  // large messages: the fewest
  EXPECT_EQ(streaming_window(64ull << 20, 0), 8);   // but never more than 512 MiB worth
  EXPECT_EQ(streaming_window(1ull << 30, 0), 1);    // and at least one
  EXPECT_EQ(streaming_window(8192, 64), 64);        // a requested window is kept
  EXPECT_EQ(streaming_window(64ull << 20, 64), 8);  // within the same memory bound
  EXPECT_EQ(streaming_window(~0ull, 5), 1);
}
