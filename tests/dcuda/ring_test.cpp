// The command ring (dcuda/detail/command_ring.hpp) with a producer and a consumer thread, as the
// rank's thread 0 and the proxy use it.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>

#include "dcuda/detail/command_ring.hpp"

using namespace dcuda::detail;

namespace {

struct RingFixture {
  std::unique_ptr<RankHost> r = std::make_unique<RankHost>();
  // A ring that an earlier run left at `start`: its slots carry the previous lap's seqs.
  explicit RingFixture(uint32_t start) {
    std::memset(static_cast<void*>(r.get()), 0, sizeof(RankHost));
    r->proxy.consumed = start;
    for (uint32_t i = 1; i <= kRingSlots; ++i) ring_slot(*r, start - i).seq = start - i + 1;
  }
};

// Streams `count` commands from `start`; the consumer checks order, fields and staging.
void stream(uint32_t start, uint32_t count) {
  RingFixture f(start);
  RankHost& r = *f.r;
  std::thread consumer([&] {
    uint32_t head = start;
    for (uint32_t n = 0; n < count;) {
      const Command* c = ring_peek(r, head);
      if (!c) continue;
      ASSERT_EQ(c->generation, head);
      ASSERT_EQ(c->bytes, 8u);
      uint32_t staged;
      std::memcpy(&staged, ring_staging(r, head), 4);
      ASSERT_EQ(staged, ~head);
      ++head, ++n;
      ring_release(r, head);
    }
  });
  uint32_t tail = start, seen = start - kRingSlots;
  for (uint32_t n = 0; n < count; ++n, ++tail) {
    while (!ring_has_room(r, tail, seen)) {
    }
    Command& c = ring_slot(r, tail);
    c.op = uint32_t(Op::put), c.generation = tail, c.bytes = 8;
    const uint32_t staged = ~tail;
    std::memcpy(ring_staging(r, tail), &staged, 4);
    ring_post(r, tail);
  }
  consumer.join();
  EXPECT_EQ(load_acquire(&r.proxy.consumed), start + count);
}

}  // namespace

TEST(DcudaRing, ProducerAndConsumerThreads) { stream(0, 200000); }

TEST(DcudaRing, PositionsWrapPast2To32) { stream(UINT32_MAX - 1000, 5000); }

TEST(DcudaRing, FreshRingShowsNothing) {
  RingFixture f(0);
  std::memset(static_cast<void*>(f.r.get()), 0, sizeof(RankHost));
  for (uint32_t head = 0; head < kRingSlots; ++head) EXPECT_EQ(ring_peek(*f.r, head), nullptr);
}

TEST(DcudaRing, FullRingHoldsTheProducerBackUntilReleased) {
  const uint32_t start = UINT32_MAX - 5;  // the full ring straddles the wrap
  RingFixture f(start);
  RankHost& r = *f.r;
  uint32_t tail = start, seen = start - kRingSlots;
  for (; ring_has_room(r, tail, seen); ++tail) ring_post(r, tail);
  EXPECT_EQ(tail - start, kRingSlots);
  // The consumer sees all of them and nothing beyond.
  for (uint32_t p = start; p != tail; ++p) EXPECT_NE(ring_peek(r, p), nullptr);
  EXPECT_EQ(ring_peek(r, tail), nullptr);
  ring_release(r, start + 1);
  EXPECT_TRUE(ring_has_room(r, tail, seen));
  ring_post(r, tail++);
  EXPECT_FALSE(ring_has_room(r, tail, seen));
  // The reused slot shows the new command only at its new position.
  EXPECT_NE(ring_peek(r, tail - 1), nullptr);
  EXPECT_EQ(ring_peek(r, start), nullptr);
}
