// The transport between two workers in one process on loopback: what on_payload decides
// (receive, refuse, discard) for eager and rendezvous payloads, and send completions.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "transport/transport.hpp"

using namespace outboard;
using transport::Buffer;
using transport::Landing;
using transport::PeerId;

namespace {

// Headers are one letter saying what the receiver does with the payload: R receive, X refuse,
// D discard.
struct Received {
  std::string header;
  std::vector<std::byte> payload;
  bool refused;
};

struct Pair {
  std::vector<Received> got;
  int payload_calls = 0, discarded = 0;
  PeerId server_peer = 0;
  bool client_lost = false;
  std::optional<transport::Worker> server, client;
  PeerId to_server = 0;

  Pair() {
    transport::Events se;
    se.on_connect = [this](PeerId p, const std::string&) { server_peer = p; };
    se.on_payload = [this](PeerId, std::span<const std::byte> h, uint64_t n) -> Landing {
      ++payload_calls;
      switch (h.empty() ? 'R' : static_cast<char>(h[0])) {
        case 'D':
          ++discarded;
          return Landing::discard();
        case 'X':
          return Landing::refuse();
        default:
          return Landing::receive(Buffer::allocate(n));
      }
    };
    se.on_message = [this](PeerId, std::vector<std::byte> h, Buffer b, bool refused) {
      got.push_back({std::string(reinterpret_cast<const char*>(h.data()), h.size()),
                     std::vector<std::byte>(b.data(), b.data() + b.size()), refused});
    };
    server.emplace(std::move(se));
    uint16_t port = server->listen("127.0.0.1", 0);
    transport::Events ce;
    ce.on_disconnect = [this](PeerId, const std::string&) { client_lost = true; };
    client.emplace(std::move(ce));
    to_server = client->connect("127.0.0.1", port);
  }

  template <class Pred>
  bool run_until(Pred done, double seconds = 20) {
    const uint64_t end = now_ns() + static_cast<uint64_t>(seconds * 1e9);
    while (!done()) {
      if (now_ns() > end) return false;
      client->progress();
      server->progress();
    }
    return true;
  }

  void send(const char* header, const std::vector<std::byte>& data, transport::SendDone done = {}) {
    transport::Segment seg{data.data(), data.size()};
    client->send(to_server, std::as_bytes(std::span(header, std::strlen(header))),
                 std::span<const transport::Segment>(&seg, data.empty() ? 0 : 1), done);
  }
};

std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte((i * 131 + seed) & 0xff);
  return v;
}

struct Count {
  int ok = 0, failed = 0;
  static void fn(void* self, bool ok) { ++(ok ? static_cast<Count*>(self)->ok : static_cast<Count*>(self)->failed); }
  transport::SendDone done() { return {&Count::fn, this}; }
};

// Eager (small) and rendezvous (large) sizes: UCX picks the protocol by size.
class TransportSizes : public ::testing::TestWithParam<size_t> {};

TEST_P(TransportSizes, DiscardedPayloadsAreConsumedAndLaterMessagesStillArrive) {
  Pair p;
  const size_t n = GetParam();
  auto first = pattern(n, 1), discarded = pattern(n, 2), last = pattern(n, 3);
  Count c;
  p.send("R1", first, c.done());
  for (int i = 0; i < 20; ++i) p.send("D", discarded, c.done());
  p.send("R2", last, c.done());
  ASSERT_TRUE(p.run_until([&] { return p.got.size() >= 2 && c.ok == 22; })) << "got " << p.got.size() << ", sent " << c.ok;
  // Nothing more shows up: the discarded messages are not delivered.
  p.run_until([] { return false; }, 0.2);
  ASSERT_EQ(p.got.size(), 2u);
  EXPECT_EQ(p.got[0].header, "R1");
  EXPECT_EQ(p.got[0].payload, first);
  EXPECT_EQ(p.got[1].header, "R2");
  EXPECT_EQ(p.got[1].payload, last);
  EXPECT_FALSE(p.got[0].refused || p.got[1].refused);
  EXPECT_EQ(p.discarded, 20);
  EXPECT_EQ(p.payload_calls, 22);
  EXPECT_EQ(c.failed, 0);
  EXPECT_FALSE(p.client_lost);
}

TEST_P(TransportSizes, RefusedPayloadsAreDeliveredEmptyAndMarked) {
  Pair p;
  auto data = pattern(GetParam(), 4);
  p.send("X", data);
  p.send("R", data);
  ASSERT_TRUE(p.run_until([&] { return p.got.size() >= 2; }));
  EXPECT_EQ(p.got[0].header, "X");
  EXPECT_TRUE(p.got[0].refused);
  EXPECT_TRUE(p.got[0].payload.empty());
  EXPECT_EQ(p.got[1].header, "R");
  EXPECT_FALSE(p.got[1].refused);
  EXPECT_EQ(p.got[1].payload, data);
}

INSTANTIATE_TEST_SUITE_P(EagerAndRendezvous, TransportSizes, ::testing::Values(size_t(1), size_t(4096), size_t(8) << 20));

TEST(Transport, DiscardsOfGrowingRendezvousSizesWhileOthersAreInFlight) {
  Pair p;
  Count c;
  std::vector<std::vector<std::byte>> data;
  for (size_t n : {size_t(1) << 20, size_t(4) << 20, size_t(16) << 20, size_t(2) << 20}) data.push_back(pattern(n, 5));
  for (auto& d : data) p.send("D", d, c.done());
  auto tail = pattern(3 << 20, 6);
  p.send("R", tail, c.done());
  ASSERT_TRUE(p.run_until([&] { return p.got.size() == 1 && c.ok == 5; }));
  EXPECT_EQ(p.got[0].payload, tail);
  EXPECT_EQ(p.discarded, 4);
}

TEST(Transport, ManySendsCompleteAndHeadersOfAnyLengthArrive) {
  Pair p;
  Count c;
  auto data = pattern(4096, 7);
  const int n = 20000;
  int sent = 0;
  // Windowed, as a streaming client: completions recycle the send records.
  ASSERT_TRUE(p.run_until([&] {
    while (sent < n && sent - c.ok < 64) p.send("D", data, c.done()), ++sent;
    return c.ok == n;
  }, 60));
  EXPECT_EQ(p.discarded, n);
  std::string long_header(5000, 'R');  // beyond the inline header storage
  bool done = false;
  p.client->send(p.to_server, std::as_bytes(std::span(long_header.data(), long_header.size())), {},
                 [&](bool ok) { done = ok; });
  ASSERT_TRUE(p.run_until([&] { return done && !p.got.empty(); }));
  EXPECT_EQ(p.got.back().header, long_header);
}

TEST(Transport, SendToUnknownPeerFailsFromProgress) {
  Pair p;
  Count c;
  std::vector<std::byte> none;
  p.client->send(p.to_server + 1000, std::as_bytes(std::span("R", 1)), {}, c.done());
  EXPECT_EQ(c.failed, 0);  // not from inside send()
  p.client->progress();
  EXPECT_EQ(c.failed, 1);
}

TEST(Transport, PendingSendsFailWhenTheWorkerGoes) {
  Count c;
  {
    Pair p;
    ASSERT_TRUE(p.run_until([&] { return p.server_peer != 0; }));
    auto big = pattern(32 << 20, 8);
    p.send("R", big, c.done());  // rendezvous: in flight until the server pulls it
    p.client.reset();
  }
  EXPECT_EQ(c.ok + c.failed, 1);
}

// Borrowed sends: nothing is copied, so the header and data must survive until completion; eager
// and rendezvous sizes alike arrive intact and complete exactly once.
TEST_P(TransportSizes, BorrowedSendsArriveAndCompleteOnce) {
  Pair p;
  Count c;
  const auto data = pattern(GetParam(), 9);
  const char header[] = "R";
  const transport::SendDone done = c.done();
  const int n = 50;
  int sent = 0;
  ASSERT_TRUE(p.run_until([&] {
    while (sent < n && sent - c.ok < 16)
      p.client->send_borrowed(p.to_server, std::as_bytes(std::span(header, 1)), data.data(), data.size(), &done), ++sent;
    return c.ok == n && p.got.size() == size_t(n);
  }, 60)) << "completed " << c.ok << ", arrived " << p.got.size();
  for (const auto& r : p.got) {
    EXPECT_EQ(r.header, "R");
    EXPECT_EQ(r.payload, data);
  }
  p.run_until([] { return false; }, 0.1);
  EXPECT_EQ(c.ok, n);
  EXPECT_EQ(c.failed, 0);
}

TEST(Transport, BorrowedSendToUnknownPeerFailsFromProgress) {
  Pair p;
  Count c;
  const transport::SendDone done = c.done();
  p.client->send_borrowed(p.to_server + 1000, std::as_bytes(std::span("R", 1)), nullptr, 0, &done);
  EXPECT_EQ(c.failed, 0);  // not from inside send_borrowed()
  p.client->progress();
  EXPECT_EQ(c.failed, 1);
}

TEST(Transport, PendingBorrowedSendsFailWhenTheWorkerGoes) {
  Count c;
  const transport::SendDone done = c.done();
  {
    Pair p;
    ASSERT_TRUE(p.run_until([&] { return p.server_peer != 0; }));
    auto big = pattern(32 << 20, 10);
    p.client->send_borrowed(p.to_server, std::as_bytes(std::span("R", 1)), big.data(), big.size(), &done);
    p.client.reset();  // rendezvous: still in flight
  }
  EXPECT_EQ(c.ok + c.failed, 1);
}

}  // namespace
