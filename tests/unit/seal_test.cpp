// Encrypted sessions: the seal layer on its own (round trips, tampering, replay, reordering, the
// other direction's key), and two real transport Workers on loopback with Worker::protect
// (eager and rendezvous payloads, plaintext after encryption started, mismatched keys, sinks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "transport/seal.hpp"
#include "progress_until.hpp"
#include "transport/transport.hpp"

using namespace outboard;
using transport::Buffer;
using transport::Landing;
using transport::PeerId;
using transport::Seal;
using transport::SealError;
using transport::SealKeys;
using transport::Segment;

namespace {

std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte((i * 131 + seed) & 0xff);
  return v;
}

std::vector<std::byte> text(const std::string& s) {
  return std::vector<std::byte>(reinterpret_cast<const std::byte*>(s.data()),
                                reinterpret_cast<const std::byte*>(s.data()) + s.size());
}

// The two ends of a session, as the handshake gives them.
struct Ends {
  SealKeys client, server;
  Ends() {
    Secret secret{};
    for (size_t i = 0; i < secret.size(); ++i) secret[i] = uint8_t(i * 7);
    SessionKeys k = session_keys(secret, random_nonce(), random_nonce());
    client = {k.client_to_server, k.server_to_client};
    server = {k.server_to_client, k.client_to_server};
  }
};

struct Sealed {
  uint64_t counter;
  std::vector<std::byte> header, payload;
};

Sealed seal(Seal& s, const std::vector<std::byte>& header, const std::vector<std::byte>& payload) {
  Sealed out;
  out.counter = s.seal_header(header, payload.size(), out.header);
  out.payload.resize(transport::sealed_payload_bytes(payload.size()));
  Segment seg{payload.data(), payload.size()};
  s.seal_payload(out.counter, {&seg, 1}, payload.size(), out.payload.data());
  return out;
}

std::vector<std::byte> open(Seal& s, const Sealed& m, std::vector<std::byte>& header) {
  Seal::Opened o = s.open_header(m.header, header);
  std::vector<std::byte> plain(o.payload_bytes);
  s.open_payload(o.counter, m.payload, o.payload_bytes, plain.data());
  return plain;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SealError& e) {
    return e.what();
  }
  return "";
}

TEST(Seal, KeysDifferPerDirectionAndPerSession) {
  Secret secret{};
  Nonce a = random_nonce(), b = random_nonce();
  SessionKeys k1 = session_keys(secret, a, b), k2 = session_keys(secret, a, b), k3 = session_keys(secret, b, a);
  EXPECT_EQ(k1.client_to_server, k2.client_to_server);
  EXPECT_NE(k1.client_to_server, k1.server_to_client);
  EXPECT_NE(k1.client_to_server, k3.client_to_server);
  Secret other{};
  other[0] = 1;
  EXPECT_NE(session_keys(other, a, b).client_to_server, k1.client_to_server);
}

TEST(Seal, RoundTripsHeadersAndPayloadsOfManySizes) {
  Ends e;
  Seal c(e.client), s(e.server);
  for (size_t n : {size_t(0), size_t(1), size_t(4096), size_t(transport::kSealPiece), size_t(transport::kSealPiece + 1),
                   size_t(3) << 20}) {
    auto header = text("header of " + std::to_string(n)), payload = pattern(n, int(n));
    Sealed m = seal(c, header, payload);
    EXPECT_EQ(m.header.size(), header.size() + transport::kSealHeaderOverhead);
    if (n >= 64) {  // the plaintext is not in what travels
      EXPECT_EQ(std::search(m.payload.begin(), m.payload.end(), payload.begin(), payload.begin() + 64), m.payload.end());
    }
    std::vector<std::byte> got_header;
    EXPECT_EQ(open(s, m, got_header), payload);
    EXPECT_EQ(got_header, header);
  }
  EXPECT_EQ(c.sent(), 6u);
  EXPECT_EQ(s.received(), 6u);
}

TEST(Seal, PayloadsOfSeveralSegmentsSealAsTheirConcatenation) {
  Ends e;
  Seal c(e.client), s(e.server);
  auto a = pattern(100000, 1), b = pattern(transport::kSealPiece * 2, 2), d = pattern(7, 3);
  std::vector<std::byte> all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), d.begin(), d.end());
  Segment segs[] = {{a.data(), a.size()}, {b.data(), b.size()}, {d.data(), d.size()}};
  Sealed m;
  m.counter = c.seal_header(text("H"), all.size(), m.header);
  m.payload.resize(transport::sealed_payload_bytes(all.size()));
  c.seal_payload(m.counter, segs, all.size(), m.payload.data());
  std::vector<std::byte> h;
  Seal::Opened o = s.open_header(m.header, h);
  // Opened in place, as a landing buffer would be.
  s.open_payload(o.counter, m.payload, o.payload_bytes, m.payload.data());
  EXPECT_TRUE(std::equal(all.begin(), all.end(), m.payload.begin()));
}

TEST(Seal, TamperedHeaderPayloadOrTagIsRejected) {
  Ends e;
  auto header = text("a call"), payload = pattern(300000, 9);
  // Every region of the header: prefix (magic excluded: that says "not sealed"), ciphertext, tag.
  for (size_t at : {size_t(5), size_t(13), transport::kSealPrefix + 1, transport::kSealPrefix + header.size() + 3}) {
    Seal c(e.client), s(e.server);
    Sealed m = seal(c, header, payload);
    m.header[at] ^= std::byte(1);
    std::vector<std::byte> h;
    EXPECT_NE(error_of([&] { s.open_header(m.header, h); }).find("failed authentication"), std::string::npos) << at;
    EXPECT_EQ(s.received(), 0u);
  }
  for (size_t at : {size_t(0), size_t(transport::kSealPiece + 5), payload.size() + 2, payload.size() + 16 + 15}) {
    Seal c(e.client), s(e.server);
    Sealed m = seal(c, header, payload);
    m.payload[at] ^= std::byte(0x80);
    std::vector<std::byte> h, out(payload.size());
    Seal::Opened o = s.open_header(m.header, h);
    EXPECT_NE(error_of([&] { s.open_payload(o.counter, m.payload, o.payload_bytes, out.data()); })
                  .find("message 0 failed authentication (payload piece "),
              std::string::npos)
        << at;
  }
  {  // truncated payload and header
    Seal c(e.client), s(e.server);
    Sealed m = seal(c, header, payload);
    std::vector<std::byte> h;
    Seal::Opened o = s.open_header(m.header, h);
    std::vector<std::byte> out(payload.size());
    EXPECT_NE(error_of([&] {
                s.open_payload(o.counter, std::span(m.payload).first(m.payload.size() - 1), o.payload_bytes, out.data());
              }).find("truncated"),
              std::string::npos);
    Sealed m2 = seal(c, header, payload);
    EXPECT_NE(error_of([&] { s.open_header(std::span(m2.header).first(10), h); }).find("truncated"), std::string::npos);
    EXPECT_NE(error_of([&] { s.open_header(std::span(m2.header).first(m2.header.size() - 1), h); }).find("failed authentication"),
              std::string::npos);
  }
}

TEST(Seal, ReplayedAndReorderedMessagesAreRejected) {
  Ends e;
  Seal c(e.client), s(e.server);
  Sealed m0 = seal(c, text("zero"), {}), m1 = seal(c, text("one"), {}), m2 = seal(c, text("two"), {});
  std::vector<std::byte> h;
  // Reordered: 1 before 0.
  EXPECT_EQ(error_of([&] { s.open_header(m1.header, h); }),
            "message 1 arrived out of order (expected message 0): replayed, reordered or lost");
  EXPECT_EQ(s.received(), 0u);
  s.open_header(m0.header, h);
  EXPECT_EQ(h, text("zero"));
  // Replayed: 0 again.
  EXPECT_NE(error_of([&] { s.open_header(m0.header, h); }).find("out of order"), std::string::npos);
  // Lost: 2 without 1.
  EXPECT_NE(error_of([&] { s.open_header(m2.header, h); }).find("out of order"), std::string::npos);
  s.open_header(m1.header, h);
  s.open_header(m2.header, h);
  EXPECT_EQ(h, text("two"));
  // A payload moved to another message (same key, other counter) does not open.
  Sealed a = seal(c, text("a"), pattern(1000, 1)), b = seal(c, text("b"), pattern(1000, 2));
  Seal::Opened oa = s.open_header(a.header, h);
  std::vector<std::byte> out(1000);
  EXPECT_NE(error_of([&] { s.open_payload(oa.counter, b.payload, 1000, out.data()); }).find("failed authentication"),
            std::string::npos);
}

TEST(Seal, TheOtherDirectionsKeyAndAPlaintextMessageAreRejected) {
  Ends e;
  Seal c(e.client), s(e.server), c2(e.client);
  Sealed m = seal(c, text("to server"), {});
  std::vector<std::byte> h;
  // The client's own receiving side (the server-to-client key) cannot open what it sent.
  EXPECT_NE(error_of([&] { c2.open_header(m.header, h); }).find("failed authentication"), std::string::npos);
  // Another session's keys neither.
  Ends other;
  Seal s2(other.server);
  EXPECT_NE(error_of([&] { s2.open_header(m.header, h); }).find("failed authentication"), std::string::npos);
  // An unsealed message ("OBRD..." as wire::encode writes it).
  auto plain = text("OBRD\x03\x00\x07\x00");
  plain[0] = std::byte(0x4f), plain[1] = std::byte(0x42), plain[2] = std::byte(0x52), plain[3] = std::byte(0x44);
  EXPECT_NE(error_of([&] { s.open_header(plain, h); }).find("plaintext message after encryption started"),
            std::string::npos);
}

// ---- two Workers on loopback ----

struct Got {
  std::string header;
  std::vector<std::byte> payload;
  bool refused;
};

struct ProtectedPair {
  std::optional<transport::Worker> server, client;
  PeerId server_peer = 0, to_server = 0;
  std::vector<Got> got, client_got;
  std::string server_lost, client_lost;
  uint64_t announced = 0;  // on_payload's size

  ProtectedPair() {
    transport::Events se;
    se.on_connect = [this](PeerId p, const std::string&) { server_peer = p; };
    se.on_disconnect = [this](PeerId, const std::string& why) { server_lost = why.empty() ? "?" : why; };
    se.on_payload = [this](PeerId, std::span<const std::byte>, uint64_t n) {
      announced = n;
      return Landing::receive(Buffer::allocate(n));
    };
    se.on_message = [this](PeerId p, std::vector<std::byte> h, Buffer b, bool refused) {
      got.push_back({std::string(reinterpret_cast<const char*>(h.data()), h.size()),
                     std::vector<std::byte>(b.data(), b.data() + b.size()), refused});
      // Echo, as a server answers: header and payload back.
      transport::Segment seg{got.back().payload.data(), got.back().payload.size()};
      server->send(p, h, {&seg, seg.bytes ? size_t(1) : size_t(0)}, nullptr);
    };
    server.emplace(std::move(se));
    const uint16_t port = server->listen("127.0.0.1", 0);
    transport::Events ce;
    ce.on_disconnect = [this](PeerId, const std::string& why) { client_lost = why.empty() ? "?" : why; };
    ce.on_payload = [](PeerId, std::span<const std::byte>, uint64_t n) { return Landing::receive(Buffer::allocate(n)); };
    ce.on_message = [this](PeerId, std::vector<std::byte> h, Buffer b, bool refused) {
      client_got.push_back({std::string(reinterpret_cast<const char*>(h.data()), h.size()),
                            std::vector<std::byte>(b.data(), b.data() + b.size()), refused});
    };
    client.emplace(std::move(ce));
    to_server = client->connect("127.0.0.1", port);
  }

  template <class Pred>
  bool run_until(Pred done, double seconds = 20) {
    return progress_until(*client, *server, done, seconds);
  }

  // A plaintext round trip (the handshake's place), then both sides protected.
  void protect(const SealKeys& client_keys, const SealKeys& server_keys) {
    send("hello", {});
    ASSERT_TRUE(run_until([&] { return client_got.size() == 1; }));
    client->protect(to_server, client_keys);
    server->protect(server_peer, server_keys);
    got.clear(), client_got.clear();
  }

  void send(const std::string& header, const std::vector<std::byte>& data) {
    transport::Segment seg{data.data(), data.size()};
    client->send(to_server, std::as_bytes(std::span(header.data(), header.size())),
                 std::span<const transport::Segment>(&seg, data.empty() ? 0 : 1), nullptr);
  }
};

TEST(ProtectedWorkers, EagerAndRendezvousMessagesRoundTrip) {
  Ends e;
  ProtectedPair p;
  p.protect(e.client, e.server);
  EXPECT_TRUE(p.client->is_protected(p.to_server));
  std::vector<std::vector<std::byte>> sent;
  int i = 0;
  for (size_t n : {size_t(0), size_t(1), size_t(4096), size_t(100000), size_t(8) << 20, size_t(3), size_t(20) << 20,
                   size_t(64) << 10}) {
    sent.push_back(pattern(n, i));
    p.send("m" + std::to_string(i++), sent.back());
  }
  // Borrowed sends are sealed too (copied after all).
  auto borrowed = pattern(5000, 42);
  transport::SendDone none{[](void*, bool) {}, nullptr};
  p.client->send_borrowed(p.to_server, std::as_bytes(std::span("b", 1)), borrowed.data(), borrowed.size(), &none);
  ASSERT_TRUE(p.run_until([&] { return p.client_got.size() == sent.size() + 1; })) << p.server_lost << p.client_lost;
  // Headers are opened in the order sent (a counter out of order would have ended the session);
  // a rendezvous payload is delivered once it has landed, so later eager messages may overtake it.
  auto find = [](const std::vector<Got>& in, const std::string& h) {
    return std::find_if(in.begin(), in.end(), [&](const Got& g) { return g.header == h; });
  };
  for (size_t k = 0; k < sent.size(); ++k) {
    for (const auto* side : {&p.got, &p.client_got}) {
      auto it = find(*side, "m" + std::to_string(k));
      ASSERT_NE(it, side->end()) << k;
      EXPECT_EQ(it->payload, sent[k]) << k;
      EXPECT_FALSE(it->refused);
    }
  }
  ASSERT_NE(find(p.got, "b"), p.got.end());
  EXPECT_EQ(find(p.got, "b")->payload, borrowed);
  EXPECT_TRUE(p.server_lost.empty() && p.client_lost.empty());
  EXPECT_THROW(p.server->open_sink(p.server_peer), Error);
}

TEST(ProtectedWorkers, PlaintextAfterEncryptionStartedEndsTheSession) {
  Ends e;
  ProtectedPair p;
  p.send("hello", {});
  ASSERT_TRUE(p.run_until([&] { return p.client_got.size() == 1; }));
  p.server->protect(p.server_peer, e.server);  // the client never switches
  p.send("plain", pattern(1000, 1));
  ASSERT_TRUE(p.run_until([&] { return !p.server_lost.empty(); }));
  EXPECT_NE(p.server_lost.find("plaintext message after encryption started"), std::string::npos) << p.server_lost;
  EXPECT_EQ(p.got.size(), 1u);  // only the hello
}

TEST(ProtectedWorkers, MismatchedKeysEndTheSessionForEagerAndRendezvous) {
  for (size_t n : {size_t(100), size_t(16) << 20}) {
    Ends e, other;
    ProtectedPair p;
    p.protect(other.client, e.server);
    p.send("x", pattern(n, 1));
    ASSERT_TRUE(p.run_until([&] { return !p.server_lost.empty(); }));
    EXPECT_EQ(p.server_lost, "encrypted session: message 0 failed authentication");
    EXPECT_TRUE(p.got.empty());
  }
}

}  // namespace
