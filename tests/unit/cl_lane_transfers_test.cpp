// A remote OpenCL session's write data over its lanes (server/services/opencl_transfers.hpp):
// chunks landed before or after their transfer is announced, a session's thread waiting for the
// whole of it, and what a hostile client may not do.
#include "server/services/opencl_transfers.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <thread>

#include "common/error.hpp"

namespace outboard::server {
namespace {

constexpr uint64_t kChunk = wire::kMinChunkBytes;
const ClLaneTransfers::CheckLimits kNoLimits = [](uint64_t) {};

// Lands chunk `index` of transfer `id` (of `total` bytes) filled with bytes of value index + 1.
void send_chunk(ClLaneTransfers& t, uint64_t id, uint64_t total, uint64_t index, uint64_t chunk = kChunk) {
  const wire::ClChunk c{id, total, chunk, index};
  transport::Landing landing = t.land(c, wire::chunk_length(c), kNoLimits);
  ASSERT_EQ(landing.action(), transport::Landing::Action::receive);
  std::memset(landing.buffer().data(), int(index + 1), wire::chunk_length(c));
  t.arrived(c);
}

void expect_chunks(const transport::Buffer& b, uint64_t total) {
  ASSERT_EQ(b.size(), total);
  for (uint64_t i = 0; i < total; i += 997) EXPECT_EQ(uint8_t(b.data()[i]), uint8_t(i / kChunk + 1)) << "byte " << i;
}

TEST(ClLaneTransfers, ChunksBeforeTheirAnnouncementInAnyOrder) {
  ClLaneTransfers t;
  const uint64_t total = 3 * kChunk + 100;
  for (uint64_t i : {3, 0, 2, 1}) send_chunk(t, 1, total, i);
  t.announce(1, total, kNoLimits);
  auto data = t.take(1);
  ASSERT_TRUE(data);
  expect_chunks(*data, total);
}

// The server's status reads what is open and what the session's thread waits for (how a stall
// on the H200 host was placed: everything had arrived, the session's thread was in the platform).
TEST(ClLaneTransfers, ASnapshotSaysWhatIsOpenAndAwaited) {
  ClLaneTransfers t;
  const uint64_t total = 2 * kChunk;
  EXPECT_EQ(t.snapshot().open, 0u);
  t.announce(1, total, kNoLimits);
  send_chunk(t, 1, total, 1);
  send_chunk(t, 2, kChunk, 0);
  ClLaneTransfers::Snapshot s = t.snapshot();
  EXPECT_EQ(s.open, 2u);
  EXPECT_EQ(s.bytes, total + kChunk);
  EXPECT_EQ(s.arrived_bytes, 2 * kChunk);
  EXPECT_EQ(s.waiting_for, 0u);
  auto taken = std::async(std::launch::async, [&] { return t.take(1); });
  while (t.snapshot().waiting_for != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  send_chunk(t, 1, total, 0);
  ASSERT_TRUE(taken.get());
  s = t.snapshot();
  EXPECT_EQ(s.open, 1u);
  EXPECT_EQ(s.waiting_for, 0u);
}

TEST(ClLaneTransfers, TheSessionWaitsForTheLastChunk) {
  ClLaneTransfers t;
  const uint64_t total = 4 * kChunk;
  t.announce(1, total, kNoLimits);
  send_chunk(t, 1, total, 0);
  auto taken = std::async(std::launch::async, [&] { return t.take(1); });
  for (uint64_t i = 1; i < 4; ++i) {
    EXPECT_EQ(taken.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout) << "taken before chunk " << i;
    send_chunk(t, 1, total, i);
  }
  auto data = taken.get();
  ASSERT_TRUE(data);
  expect_chunks(*data, total);
  // The next transfer, chunks first: its own.
  send_chunk(t, 2, kChunk, 0);
  t.announce(2, kChunk, kNoLimits);
  EXPECT_TRUE(t.take(2));
}

TEST(ClLaneTransfers, StopReleasesAWaitingSession) {
  ClLaneTransfers t;
  t.announce(1, 2 * kChunk, kNoLimits);
  auto taken = std::async(std::launch::async, [&] { return t.take(1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  t.stop();
  EXPECT_FALSE(taken.get());
}

TEST(ClLaneTransfers, WhatAHostileClientMayNotDo) {
  ClLaneTransfers t;
  const uint64_t total = 2 * kChunk;
  send_chunk(t, 5, total, 0);
  // The same chunk twice; a chunk of another size or with another chunking; a chunk not landed.
  EXPECT_THROW(t.land({5, total, kChunk, 0}, kChunk, kNoLimits), ProtocolError);
  EXPECT_THROW(t.land({5, total + 1, kChunk, 1}, kChunk, kNoLimits), ProtocolError);
  EXPECT_THROW(t.land({5, total, 2 * kChunk, 0}, total, kNoLimits), ProtocolError);
  EXPECT_THROW(t.land({5, total, kChunk, 1}, kChunk - 1, kNoLimits), ProtocolError);
  EXPECT_THROW(t.arrived({5, total, kChunk, 1}), ProtocolError);
  EXPECT_THROW(t.arrived({6, total, kChunk, 0}), ProtocolError);
  // Announced with another size than its chunks say.
  EXPECT_THROW(t.announce(5, total + 1, kNoLimits), ProtocolError);
  // Ids that do not increase; chunks of a transfer already taken.
  ClLaneTransfers u;
  u.announce(3, kChunk, kNoLimits);
  send_chunk(u, 3, kChunk, 0);
  ASSERT_TRUE(u.take(3));
  EXPECT_THROW(u.announce(3, kChunk, kNoLimits), ProtocolError);
  EXPECT_THROW(u.announce(2, kChunk, kNoLimits), ProtocolError);
  EXPECT_THROW(u.land({3, kChunk, kChunk, 0}, kChunk, kNoLimits), ProtocolError);
  EXPECT_THROW(u.land({1, kChunk, kChunk, 0}, kChunk, kNoLimits), ProtocolError);
}

TEST(ClLaneTransfers, OpenTransfersAreBoundedInNumberAndMemory) {
  ClLaneTransfers t;
  for (uint64_t id = 1; id <= ClLaneTransfers::kMaxOpen; ++id) t.announce(id, kChunk, kNoLimits);
  EXPECT_THROW(t.announce(ClLaneTransfers::kMaxOpen + 1, kChunk, kNoLimits), ProtocolError);
  EXPECT_THROW(t.land({ClLaneTransfers::kMaxOpen + 2, kChunk, kChunk, 0}, kChunk, kNoLimits), ProtocolError);

  // The limits see what the open transfers would hold with the new one.
  ClLaneTransfers u;
  uint64_t asked = 0;
  auto limit = [&](uint64_t open) {
    asked = open;
    if (open > 3 * kChunk) throw ProtocolError("client holds too much memory on this server");
  };
  u.announce(1, 2 * kChunk, limit);
  EXPECT_EQ(asked, 2 * kChunk);
  EXPECT_THROW(u.land({2, 2 * kChunk, kChunk, 0}, kChunk, limit), ProtocolError);
  EXPECT_EQ(asked, 4 * kChunk);
  u.announce(3, kChunk, limit);  // fits: 3 chunks open
}

}  // namespace
}  // namespace outboard::server
