#include "transport/arena.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace outboard::transport {
namespace {

constexpr size_t kG = Arena::kGrain;

TEST(Arena, TakesRoundedPiecesAndGivesThemBack) {
  std::vector<std::byte> region(64 * kG);
  Arena a(region.data(), region.size());
  void* p = a.take(1);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(a.owns(p));
  EXPECT_EQ(a.in_use(), kG);
  void* q = a.take(3 * kG + 1);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(a.in_use(), 5 * kG);
  EXPECT_TRUE(a.give(p));
  EXPECT_FALSE(a.give(p));  // twice: not a piece any more
  EXPECT_TRUE(a.give(q));
  EXPECT_EQ(a.in_use(), 0u);
  EXPECT_EQ(a.largest_free(), 64 * kG);  // the neighbours merged back into one piece
}

TEST(Arena, RefusesWhatDoesNotFitAndForeignPointers) {
  std::vector<std::byte> region(8 * kG);
  Arena a(region.data(), region.size());
  EXPECT_EQ(a.take(0), nullptr);
  EXPECT_EQ(a.take(9 * kG), nullptr);
  void* whole = a.take(8 * kG);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(a.take(1), nullptr);
  int elsewhere = 0;
  EXPECT_FALSE(a.give(&elsewhere));
  EXPECT_FALSE(a.give(static_cast<std::byte*>(whole) + kG));  // inside a piece, not its start
  EXPECT_TRUE(a.give(whole));
}

TEST(Arena, BestFitKeepsTheLargePieceWhole) {
  std::vector<std::byte> region(32 * kG);
  Arena a(region.data(), region.size());
  void* small1 = a.take(2 * kG);
  void* sep = a.take(kG);
  void* rest = a.take(29 * kG);
  ASSERT_TRUE(small1 && sep && rest);
  EXPECT_TRUE(a.give(small1));
  EXPECT_TRUE(a.give(rest));
  // A 2-grain request goes into the 2-grain hole, leaving the 29 grains for a large one.
  void* again = a.take(2 * kG);
  EXPECT_EQ(again, small1);
  EXPECT_NE(a.take(29 * kG), nullptr);
}

TEST(Arena, RandomTakesAndGivesNeverOverlap) {
  std::vector<std::byte> region(256 * kG);
  Arena a(region.data(), region.size());
  std::mt19937 rng(7);
  std::vector<std::pair<std::byte*, size_t>> held;
  for (int step = 0; step < 5000; ++step) {
    if (held.empty() || rng() % 2) {
      const size_t n = 1 + rng() % (16 * kG);
      auto* p = static_cast<std::byte*>(a.take(n));
      if (!p) continue;
      const size_t size = (n + kG - 1) / kG * kG;
      for (auto& [q, m] : held) ASSERT_TRUE(p + size <= q || q + m <= p) << "overlap at step " << step;
      held.emplace_back(p, size);
    } else {
      const size_t i = rng() % held.size();
      ASSERT_TRUE(a.give(held[i].first));
      held.erase(held.begin() + static_cast<long>(i));
    }
  }
  for (auto& [p, n] : held) ASSERT_TRUE(a.give(p));
  EXPECT_EQ(a.in_use(), 0u);
  EXPECT_EQ(a.largest_free(), 256 * kG);
}

}  // namespace
}  // namespace outboard::transport
