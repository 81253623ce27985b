// Unit tests of the direct transfers' staging budget (backends/opencl/staging_budget.hpp): pieces
// cover each transfer in order, the budget is never exceeded, transfers are served in the order
// they asked, and a piece given back on the thread that took it (at once) hands out the next.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <vector>

#include "backends/opencl/staging_budget.hpp"

namespace outboard::backends {
namespace {

using Piece = StagingBudget::Piece;

// Keeps its pieces until told to give them back; records what it got.
struct Holder : StagingBudget::Taker {
  std::deque<std::shared_ptr<Piece>> held;
  std::vector<std::pair<uint64_t, uint64_t>> got;  // (at, bytes)
  void take(std::shared_ptr<Piece> p) override {
    got.push_back({p->at, p->bytes});
    held.push_back(std::move(p));
  }
  void give_one() {
    if (!held.empty()) held.pop_front();
  }
};

// Gives every piece back at once, inside take().
struct Passer : StagingBudget::Taker {
  uint64_t bytes = 0, pieces = 0;
  void take(std::shared_ptr<Piece> p) override {
    bytes += p->bytes;
    ++pieces;
  }
};

TEST(StagingBudget, PieceSizes) {
  StagingBudget::Gauge g;
  StagingBudget big(256 << 20, g), small(4 << 20, g);
  EXPECT_EQ(big.piece_bytes(8 << 20), 1u << 20);    // at least the smallest piece
  EXPECT_EQ(big.piece_bytes(64 << 20), 8u << 20);   // ~8 pieces
  EXPECT_EQ(big.piece_bytes(1ull << 32), 32u << 20);  // at most the largest
  EXPECT_EQ(small.piece_bytes(64 << 20), 1u << 20);  // at most a quarter of the budget
  EXPECT_EQ(big.piece_bytes((8 << 20) + 4096 * 8 + 8) % 4096, 0u);  // whole pages
}

TEST(StagingBudget, BoundedAndInOrder) {
  StagingBudget::Gauge g;
  auto budget = std::make_shared<StagingBudget>(4 << 20, g);
  auto a = std::make_shared<Holder>(), b = std::make_shared<Holder>();
  budget->ask(a, (6 << 20) + 100);  // 7 pieces of 1 MiB, the last one 100 bytes
  budget->ask(b, 2 << 20);
  EXPECT_EQ(a->got.size(), 4u);  // the budget's worth
  EXPECT_TRUE(b->got.empty());   // b waits for a, which asked first
  EXPECT_EQ(g.now.load(), 4u << 20);
  while (!a->held.empty() || !b->held.empty()) {
    EXPECT_LE(g.now.load(), 4u << 20);
    a->give_one();
    b->give_one();
  }
  ASSERT_EQ(a->got.size(), 7u);
  for (size_t i = 0; i < a->got.size(); ++i) EXPECT_EQ(a->got[i].first, i << 20);
  EXPECT_EQ(a->got.back().second, 100u);
  EXPECT_EQ(b->got.size(), 2u);
  EXPECT_EQ(g.now.load(), 0u);
  EXPECT_EQ(g.peak.load(), 4u << 20);
}

// A piece given back releases its memory before the next piece is handed out: the next one
// reuses it (transport::Buffer's cache), so no more than the budget is ever allocated at once.
TEST(StagingBudget, MemoryReleasedBeforeTheNextPiece) {
  StagingBudget::Gauge g;
  auto budget = std::make_shared<StagingBudget>(4 << 20, g);
  auto a = std::make_shared<Holder>();
  budget->ask(a, 5 << 20);  // 4 pieces of 1 MiB now, the fifth once one is back
  ASSERT_EQ(a->held.size(), 4u);
  const std::byte* first = a->held.front()->memory.data();
  ASSERT_NE(first, nullptr);
  a->give_one();
  ASSERT_EQ(a->held.size(), 4u);
  EXPECT_EQ(a->held.back()->memory.data(), first);
}

TEST(StagingBudget, GivenBackAtOnce) {
  StagingBudget::Gauge g;
  auto budget = std::make_shared<StagingBudget>(4 << 20, g);
  auto p = std::make_shared<Passer>();
  budget->ask(p, 100 << 20);  // 100 pieces, each back before the next is handed out
  EXPECT_EQ(p->pieces, 100u);
  EXPECT_EQ(p->bytes, 100u << 20);
  EXPECT_EQ(g.now.load(), 0u);
}

}  // namespace
}  // namespace outboard::backends
