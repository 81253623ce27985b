// The proxy against a hostile peer: a raw transport::Worker that claims to be process 1 of the
// run and sends hand-made messages. What it sends wrong is refused or ends its connection;
// nothing of ours is touched, the proxy records it and goes on serving.
#include <gtest/gtest.h>

#include <cstring>
#include <atomic>
#include <functional>
#include <thread>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "dcuda/runtime/cpu_link.hpp"
#include "dcuda/runtime/proxy.hpp"
#include "tests/dcuda/fake_ranks.hpp"
#include "tests/dcuda/raw_peer.hpp"
#include "transport/transport.hpp"
#include "wire/dcuda.hpp"

using namespace dcuda;
namespace tp = outboard::transport;
namespace msg = outboard::wire::dcuda;
using test::port_of;
using test::RawPeer;

namespace {

msg::Put put(uint32_t seq, uint32_t op, uint32_t window, uint64_t offset, uint64_t bytes, uint32_t tag = 0) {
  return msg::Put{op, /*source=*/1, /*target=*/0, seq, window, tag, offset, bytes};
}

}  // namespace

TEST(DcudaProxy, HostilePeerIsRefusedAndNothingIsTouched) {
  RawPeer raw;
  const uint16_t raw_port = raw.worker.listen("127.0.0.1", 0);
  test::Ranks ranks(1, 4096);  // outlives the proxy, whose thread reads it
  runtime::Proxy::Options o;
  o.stop_timeout_s = 5;
  runtime::Proxy proxy(o);
  runtime::World world;
  world.self = 0;
  world.processes = {{0, 1, proxy.address(), proxy.key(), "", ""}, {1, 1, "127.0.0.1:" + std::to_string(raw_port), "00", "", ""}};
  runtime::CpuLink link;
  proxy.start(world, ranks.host.data(), ranks.device.data(), link);

  // A connection with the wrong key is turned away (and is no error of the run). Its courtesy
  // Error message may be lost with the connection: the proxy's count is what is checked.
  const tp::PeerId intruder = raw.worker.connect("127.0.0.1", port_of(proxy.address()));
  raw.send(intruder, msg::Hello{1, std::string(64, '0')});
  ASSERT_TRUE(raw.until([&] { return proxy.stats().turned_away == 1; }));
  EXPECT_EQ(proxy.error(), "");

  const tp::PeerId to = raw.worker.connect("127.0.0.1", port_of(proxy.address()));
  raw.send(to, msg::Hello{1, proxy.key()});
  std::vector<std::byte> eight(8, std::byte{0x5a});
  using detail::Op;
  raw.send(to, put(0, uint32_t(Op::put), 3, 0, 8), eight);                 // window 3 not registered
  raw.send(to, put(1, uint32_t(Op::put), 0, 0, 16), eight);                // payload shorter than bytes
  raw.send(to, put(2, 9, 0, 0, 8), eight);                                 // unknown op
  raw.send(to, put(3, uint32_t(Op::put), 0, 4090, 8), eight);              // past the window's end
  raw.send(to, put(4, uint32_t(Op::put), 0, ~uint64_t(0) - 2, 8), eight);  // offset + bytes overflows
  raw.send(to, put(5, uint32_t(Op::notify), 0, 0, 0, 256));               // tag out of range
  raw.send(to, put(6, uint32_t(Op::notify), 0, 0, 8, 1), eight);           // a notify with a payload
  // Out of order: 8 before 7; both applied, in sequence order.
  raw.send(to, put(8, uint32_t(Op::notify), 0, 0, 0, 3));
  raw.send(to, put(7, uint32_t(Op::put_notify), 0, 100, 8, 3), eight);
  ASSERT_TRUE(raw.until([&] {
    return !raw.answers.empty() && std::holds_alternative<msg::Ack>(raw.answers.back()) &&
           std::get<msg::Ack>(raw.answers.back()).seq == 8;
  }));
  EXPECT_EQ(raw.count<msg::Refused>(), 7u);
  EXPECT_EQ(proxy.stats().refused, 7u);
  EXPECT_EQ(proxy.stats().applied, 2u);
  for (size_t k = 0; k < 4096; ++k)
    ASSERT_EQ(ranks.windows[0][k], k >= 100 && k < 108 ? 0x5a : 0) << "byte " << k;
  EXPECT_EQ(detail::load_acquire(&ranks.device[0].network_notes[3]), 2u);
  EXPECT_EQ(detail::load_acquire(&ranks.device[0].network_notes[1]), 0u);
  EXPECT_NE(proxy.error().find("window 3 of rank 0 is not registered"), std::string::npos) << proxy.error();
  EXPECT_NE(detail::load_acquire(&ranks.host[0].proxy.failed), 0u);

  // Breaking the stream itself (a sequence number far ahead, a rank not its own, a malformed
  // header) ends the connection.
  const uint64_t failures = proxy.stats().failures;
  raw.send(to, put(1000000, uint32_t(Op::notify), 0, 0, 0, 3));
  ASSERT_TRUE(raw.until([&] { return proxy.stats().failures == failures + 1; }));

  for (const auto& [what, wrong] : std::vector<std::pair<std::string, std::function<void(std::vector<std::byte>&)>>>{
           {"trailing", [](std::vector<std::byte>& h) { h.push_back(std::byte{0}); }},
           {"magic", [](std::vector<std::byte>& h) { h[0] = std::byte{0}; }},
           {"truncated", [](std::vector<std::byte>& h) { h.resize(h.size() - 3); }},
       }) {
    // A fresh process 1 cannot connect twice: these go in as the first message (hello) instead.
    const tp::PeerId c = raw.worker.connect("127.0.0.1", port_of(proxy.address()));
    std::vector<std::byte> h;
    msg::encode(msg::Hello{1, proxy.key()}, h);
    wrong(h);
    const uint64_t away = proxy.stats().turned_away;
    raw.send_raw(c, h);
    ASSERT_TRUE(raw.until([&] { return proxy.stats().turned_away == away + 1; })) << what;
  }
  std::atomic<bool> stopped{false};
  std::thread stopper([&] { proxy.stop(), stopped = true; });  // it waits for process 1's answers
  EXPECT_TRUE(raw.until([&] { return stopped.load(); }));
  stopper.join();
  EXPECT_EQ(proxy.stats().failures, failures + 1);  // turned-away connections are no error of the run
  EXPECT_NE(proxy.error().find("window 3 of rank 0 is not registered"), std::string::npos) << proxy.error();
}

// A window message the peer has no business sending (from another host, or naming a rank not its
// own) breaks the protocol: the connection ends, the run records why, nothing is mapped.
TEST(DcudaProxy, AWindowThatIsNotThePeersToShareEndsTheConnection) {
  for (const bool same_host : {false, true}) {
    RawPeer raw;
    const uint16_t raw_port = raw.worker.listen("127.0.0.1", 0);
    test::Ranks ranks(1, 4096);
    runtime::Proxy::Options o;
    o.stop_timeout_s = 2;
    runtime::Proxy proxy(o);
    runtime::World world;
    world.self = 0;
    world.processes = {{0, 1, proxy.address(), proxy.key(), "h", ""}, {1, 1, "127.0.0.1:" + std::to_string(raw_port), "00", "h", ""}};
    runtime::CpuLink link;
    std::vector<detail::WindowEntry> table(2 * detail::kMaxWindows, detail::WindowEntry{0, 0});
    runtime::PeerPaths paths;
    paths.same_host = {false, same_host};
    paths.mapped = {false, false};
    paths.windows = table.data();
    proxy.start(world, ranks.host.data(), ranks.device.data(), link, paths);
    const tp::PeerId to = raw.worker.connect("127.0.0.1", port_of(proxy.address()));
    raw.send(to, msg::Hello{1, proxy.key()});
    msg::Window w;
    w.rank = same_host ? 0 : 1;  // ours, not process 1's / process 1's, but from another host
    w.bytes = 64, w.allocation_bytes = 4096;
    raw.send(to, w);
    ASSERT_TRUE(raw.until([&] { return proxy.stats().failures == 1; })) << same_host;
    EXPECT_NE(proxy.error().find(same_host ? "which is not one of" : "another host"), std::string::npos) << proxy.error();
    for (const auto& e : table) EXPECT_EQ(e.bytes, 0u);
    proxy.stop();  // process 1 never says it finished: the stop timeout ends it
  }
}

TEST(DcudaWire, MessagesRoundTripAndMalformedOnesAreRefused) {
  msg::Window window{7, 3, 4096, 64, 1 << 20, {}};
  window.handle[5] = 9;
  const msg::Message all[] = {msg::Hello{3, "abcd"}, msg::Put{1, 2, 3, 4, 5, 6, 7, 8}, msg::Ack{1, 2},
                              msg::Refused{1, 2, "why"}, msg::Arrive{9, 2}, msg::Finished{}, msg::Error{"bye"}, msg::Welcome{},
                              window};
  std::vector<std::byte> h;
  for (const auto& m : all) {
    msg::encode(m, h);
    EXPECT_EQ(msg::decode(h), m);
    for (size_t cut = 0; cut < h.size(); ++cut)
      EXPECT_THROW(msg::decode(std::span(h).first(cut)), outboard::ProtocolError);
    h.push_back(std::byte{0});
    EXPECT_THROW(msg::decode(h), outboard::ProtocolError);
  }
  msg::encode(msg::Finished{}, h);
  h[6] = std::byte{42};  // unknown kind
  EXPECT_THROW(msg::decode(h), outboard::ProtocolError);
}
