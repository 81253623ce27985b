// Small payloads on the target side: a put or put_notify that the link's small_write_fits takes
// (by default whole 4-byte words, aligned, at most DeviceLink::kSmallWriteMaxBytes) is applied
// with one write_small (payload and counter together, value writes on CUDA) instead of copy_in +
// write_u32 + fence; anything else as before, and the order of a target's commands is kept across
// both kinds. Also the stage trace: its histogram, and what the proxy prints with it on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dcuda/detail/sync.hpp"
#include "dcuda/runtime/cpu_link.hpp"
#include "dcuda/runtime/device_link.hpp"
#include "dcuda/runtime/proxy.hpp"
#include "dcuda/runtime/proxy_trace.hpp"
#include "tests/dcuda/fake_ranks.hpp"
#include "tests/dcuda/raw_peer.hpp"

using namespace dcuda;
using runtime::DeviceLink;
using runtime::proxy_detail::ProxyTrace;
using test::port_of;
using test::RawPeer;
namespace msg = outboard::wire::dcuda;
namespace tp = outboard::transport;
using Log = std::vector<std::string>;

namespace {

// A device link that behaves as a CUDA stream does, to see what the proxy asks of it: every copy
// and write takes effect only in poll(), in issue order, so a copy reads its source late (as the
// copy engine does: the proxy must keep it alive) and a notification lands after what was issued
// before it. write_small takes its bytes at the call, as value writes do; with `native` false it
// is DeviceLink's default. Payloads up to `largest_small` bytes fit. Every call is logged.
class StreamLink final : public DeviceLink {
 public:
  explicit StreamLink(bool native, size_t largest_small = kSmallWriteMaxBytes) : native_(native), largest_(largest_small) {}

  bool small_write_fits(const void* dst, size_t bytes) const override {
    return whole_aligned_words(dst, bytes) && bytes <= largest_;
  }

  void copy_in(void* dst, const void* src, size_t bytes, std::function<void()> done) override {
    note("copy_in " + std::to_string(bytes));
    queue_.push_back([=] {
      if (bytes) std::memcpy(dst, src, bytes);
    });
    if (done) queue_.push_back(std::move(done));
  }
  void write_u32(uint32_t* dst, uint32_t value) override {
    note("write_u32");
    queue_.push_back([=] { detail::store_release(dst, value); });
  }
  void write_small(void* dst, const void* src, size_t bytes, uint32_t* counter, uint32_t value) override {
    if (!native_) return DeviceLink::write_small(dst, src, bytes, counter, value);
    note("write_small " + std::to_string(bytes) + (counter ? " +counter" : ""));
    const auto* p = static_cast<const unsigned char*>(src);
    queue_.push_back([=, bytes_now = std::vector<unsigned char>(p, p + bytes)] {
      std::memcpy(dst, bytes_now.data(), bytes);
      if (counter) detail::store_release(counter, value);
    });
  }
  // Another stream in CUDA: the proxy only reads the ranks' counters with it, at its start.
  void copy_out(void* dst, const void* src, size_t bytes, std::function<void()> done) override {
    if (bytes) std::memcpy(dst, src, bytes);
    queue_.push_back(std::move(done));
  }
  void fence(std::function<void()> done) override {
    note("fence");
    queue_.push_back(std::move(done));
  }
  bool poll() override {
    if (queue_.empty()) return false;
    auto now = std::move(queue_);  // what runs may queue more: that waits for the next poll
    queue_.clear();
    for (auto& f : now) f();
    return true;
  }
  bool idle() const override { return queue_.empty(); }

  Log log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return log_;
  }

 private:
  void note(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back(std::move(what));
  }
  bool native_;
  size_t largest_;
  std::deque<std::function<void()>> queue_;  // the proxy's thread only
  mutable std::mutex mutex_;
  Log log_;  // read by the test's thread
};

// Process 0 (a proxy with one rank, a window of `window_bytes`, over `link`) and process 1 (a
// RawPeer, connected and greeted).
struct Target {
  RawPeer raw;
  test::Ranks ranks;
  runtime::Proxy proxy;
  tp::PeerId to = 0;
  std::deque<std::vector<std::byte>> payloads;  // of the commands sent

  Target(DeviceLink& link, size_t window_bytes) : ranks(1, window_bytes), proxy(options()) {
    const uint16_t raw_port = raw.worker.listen("127.0.0.1", 0);
    runtime::World world;
    world.self = 0;
    world.processes = {{0, 1, proxy.address(), proxy.key(), "", ""}, {1, 1, "127.0.0.1:" + std::to_string(raw_port), "00", "", ""}};
    proxy.start(world, ranks.host.data(), ranks.device.data(), link);
    to = raw.worker.connect("127.0.0.1", port_of(proxy.address()));
    raw.send(to, msg::Hello{1, proxy.key()});
  }
  static runtime::Proxy::Options options() {
    runtime::Proxy::Options o;
    o.stop_timeout_s = 5;
    return o;
  }
  // Process 1's command `seq` to our rank 0, with a payload of `bytes` bytes of `pattern`.
  void send(uint32_t seq, detail::Op op, uint64_t offset, uint64_t bytes, uint32_t tag, unsigned char pattern) {
    std::vector<std::byte>& payload = payloads.emplace_back(bytes);  // the transport reads it later
    for (size_t i = 0; i < bytes; ++i) payload[i] = std::byte(static_cast<unsigned char>(pattern + i));
    raw.send(to, msg::Put{uint32_t(op), /*source=*/1, /*target=*/0, seq, /*window=*/0, tag, offset, bytes}, payload);
  }
  uint32_t counter(uint32_t tag) const { return detail::load_acquire(&ranks.device[0].network_notes[tag]); }
  // Until command `seq` is acknowledged and the tag's counter shows `notes` (the link has run).
  bool settled(uint32_t seq, uint32_t tag, uint32_t notes) {
    return raw.until([&] {
      bool acked = false;
      for (const auto& m : raw.answers)
        if (const auto* a = std::get_if<msg::Ack>(&m)) acked |= a->seq == seq;
      return acked && counter(tag) == notes;
    });
  }
  // The window holds `pattern`, `pattern + 1`, ... at [offset, offset + bytes).
  ::testing::AssertionResult holds(uint64_t offset, uint64_t bytes, unsigned char pattern) const {
    for (size_t i = 0; i < bytes; ++i)
      if (ranks.windows[0][offset + i] != static_cast<unsigned char>(pattern + i))
        return ::testing::AssertionFailure() << "byte " << offset + i << " is " << int(ranks.windows[0][offset + i])
                                             << ", expected " << int(static_cast<unsigned char>(pattern + i));
    return ::testing::AssertionSuccess();
  }
  // Process 1 says it is finished; then the proxy can stop without waiting out its timeout.
  void stop() {
    raw.send(to, msg::Finished{});
    std::atomic<bool> stopped{false};
    std::thread stopper([&] { proxy.stop(), stopped = true; });
    EXPECT_TRUE(raw.until([&] { return stopped.load(); }));
    stopper.join();
  }
};

}  // namespace

TEST(DcudaSmallWrite, OnlySmallAlignedWholeWordsFit) {
  alignas(8) unsigned char window[64];
  const runtime::CpuLink link;  // the default rule
  EXPECT_TRUE(link.small_write_fits(window, 4));
  EXPECT_TRUE(link.small_write_fits(window + 4, DeviceLink::kSmallWriteMaxBytes));
  EXPECT_FALSE(link.small_write_fits(window, DeviceLink::kSmallWriteMaxBytes + 4));  // too large
  EXPECT_FALSE(link.small_write_fits(window, 6));                                    // not whole words
  EXPECT_FALSE(link.small_write_fits(window + 2, 8));                                // not aligned
  EXPECT_FALSE(link.small_write_fits(window, 0));                                    // nothing to write
}

// A link without a faster way: copy_in of a buffer of its own, the counter behind it, and a fence
// that releases the buffer; the caller's bytes may change at once.
TEST(DcudaSmallWrite, TheDefaultCopiesAFrozenCopyAndOrdersTheCounterBehindIt) {
  StreamLink link(/*native=*/false);
  alignas(8) unsigned char window[16] = {};
  uint32_t counter = 0;
  {
    unsigned char src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    link.write_small(window, src, 8, &counter, 7);
    std::memset(src, 0xee, sizeof src);  // the caller's buffer is gone
  }
  EXPECT_EQ(link.log(), (Log{"copy_in 8", "write_u32", "fence"}));
  EXPECT_EQ(window[0], 0);  // nothing happens before the "stream" runs
  EXPECT_EQ(counter, 0u);
  EXPECT_TRUE(link.poll());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(window[i], i + 1) << i;
  EXPECT_EQ(window[8], 0);
  EXPECT_EQ(counter, 7u);
  EXPECT_TRUE(link.idle());

  unsigned char word[4] = {9, 9, 9, 9};
  link.write_small(window + 8, word, 4, nullptr, 0);  // a plain put: the copy's completion releases the buffer
  EXPECT_EQ(link.log().back(), "copy_in 4");
  word[0] = 0;
  link.poll();
  EXPECT_EQ(window[8], 9);
  EXPECT_EQ(counter, 7u);
}

TEST(DcudaProxySmallPuts, SmallAlignedPutsGoAsOneWriteTheOthersAsCopies) {
  StreamLink link(/*native=*/true);
  Target t(link, 8192);
  using detail::Op;
  t.send(0, Op::put_notify, 64, 8, 2, 0x10);     // small: payload and counter in one write
  t.send(1, Op::put, 128, 4, 0, 0x20);           // small, no notification
  t.send(2, Op::put_notify, 512, DeviceLink::kSmallWriteMaxBytes, 2, 0x30);  // the largest small one
  t.send(3, Op::put_notify, 1026, 8, 2, 0x40);   // not 4-byte aligned
  t.send(4, Op::put_notify, 2048, 6, 2, 0x50);   // not whole words
  t.send(5, Op::put_notify, 4096, DeviceLink::kSmallWriteMaxBytes + 4, 2, 0x60);  // too large
  t.send(6, Op::put, 3000, 6, 0, 0x70);          // a plain put the old way
  t.send(7, Op::notify, 0, 0, 2, 0);             // a notify, as before
  ASSERT_TRUE(t.settled(7, 2, 6));
  EXPECT_EQ(t.proxy.stats().applied, 8u);
  EXPECT_EQ(t.proxy.error(), "");
  const std::string large = "copy_in " + std::to_string(DeviceLink::kSmallWriteMaxBytes + 4);
  const std::string largest = "write_small " + std::to_string(DeviceLink::kSmallWriteMaxBytes) + " +counter";
  EXPECT_EQ(link.log(), (Log{"write_small 8 +counter", "write_small 4", largest,                      //
                             "copy_in 8", "write_u32", "fence",                                    //
                             "copy_in 6", "write_u32", "fence",                                    //
                             large, "write_u32", "fence",                                          //
                             "copy_in 6",                                                          //
                             "write_u32"}));
  EXPECT_TRUE(t.holds(64, 8, 0x10));
  EXPECT_TRUE(t.holds(128, 4, 0x20));
  EXPECT_TRUE(t.holds(512, DeviceLink::kSmallWriteMaxBytes, 0x30));
  EXPECT_TRUE(t.holds(1026, 8, 0x40));
  EXPECT_TRUE(t.holds(2048, 6, 0x50));
  EXPECT_TRUE(t.holds(4096, DeviceLink::kSmallWriteMaxBytes + 4, 0x60));
  EXPECT_TRUE(t.holds(3000, 6, 0x70));
  EXPECT_EQ(t.ranks.windows[0][72], 0);  // nothing past a small put
  EXPECT_EQ(t.ranks.windows[0][132], 0);
  t.stop();
  EXPECT_EQ(t.proxy.error(), "");
}

// What is small is the link's to say (CudaLink: what two value writes hold at that address).
TEST(DcudaProxySmallPuts, TheLinkDecidesWhatIsSmall) {
  StreamLink link(/*native=*/true, /*largest_small=*/4);
  Target t(link, 4096);
  t.send(0, detail::Op::put_notify, 0, 4, 1, 0x11);
  t.send(1, detail::Op::put_notify, 8, 8, 1, 0x22);
  ASSERT_TRUE(t.settled(1, 1, 2));
  EXPECT_EQ(link.log(), (Log{"write_small 4 +counter", "copy_in 8", "write_u32", "fence"}));
  EXPECT_TRUE(t.holds(0, 4, 0x11));
  EXPECT_TRUE(t.holds(8, 8, 0x22));
  t.stop();
}

// A large put, then a small put_notify over its first bytes: the small one's bytes and counter
// land after the large copy, whichever arrives first over the network (the target holds a command
// that arrives ahead of its stream's order).
TEST(DcudaProxySmallPuts, ASmallPutNotifyStaysBehindALargePutBeforeIt) {
  for (const bool small_arrives_first : {false, true}) {
    SCOPED_TRACE(small_arrives_first ? "small one arrives first" : "in order");
    StreamLink link(/*native=*/true);
    Target t(link, 8192);
    if (small_arrives_first) t.send(1, detail::Op::put_notify, 0, 8, 5, 0xa0);
    t.send(0, detail::Op::put, 0, 8192, 0, 0x01);
    if (!small_arrives_first) t.send(1, detail::Op::put_notify, 0, 8, 5, 0xa0);
    ASSERT_TRUE(t.settled(1, 5, 1));
    EXPECT_EQ(link.log(), (Log{"copy_in 8192", "write_small 8 +counter"}));
    EXPECT_TRUE(t.holds(0, 8, 0xa0));  // the later command's bytes win
    for (size_t i = 8; i < 8192; ++i) ASSERT_EQ(t.ranks.windows[0][i], static_cast<unsigned char>(0x01 + i)) << i;
    t.stop();
    EXPECT_EQ(t.proxy.error(), "");
  }
}

// Through the CPU link (as the proxy's multi-process tests run): small ones counted apart.
TEST(DcudaProxySmallPuts, TheCpuLinkAppliesAndCountsThem) {
  runtime::CpuLink link;
  Target t(link, 4096);
  t.send(0, detail::Op::put_notify, 100, 8, 3, 0x5a);   // small
  t.send(1, detail::Op::put_notify, 200, 10, 3, 0x6a);  // not whole words: a copy
  ASSERT_TRUE(t.settled(1, 3, 2));
  EXPECT_EQ(link.small_writes(), 1u);
  EXPECT_EQ(link.copies(), 1u + 1u);  // the proxy's start reads the counters with one copy_out
  EXPECT_TRUE(t.holds(100, 8, 0x5a));
  EXPECT_TRUE(t.holds(200, 10, 0x6a));
  t.stop();
}

TEST(DcudaProxyTrace, OffItRecordsAndPrintsNothing) {
  ProxyTrace off(false);
  EXPECT_EQ(off.start(), 0u);
  off.record(ProxyTrace::copy_in, 0);
  ::testing::internal::CaptureStderr();
  off.print(stderr, "x");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// DCUDA_PROXY_TRACE=1: the proxy prints its stages when it stops.
TEST(DcudaProxyTrace, OnTheProxyPrintsEachStageItSaw) {
  ::setenv("DCUDA_PROXY_TRACE", "1", 1);
  StreamLink link(/*native=*/true);
  auto t = std::make_unique<Target>(link, 4096);  // its proxy reads the variable when made
  ::unsetenv("DCUDA_PROXY_TRACE");
  t->send(0, detail::Op::put_notify, 0, 8, 1, 1);
  t->send(1, detail::Op::put_notify, 64, 1000, 1, 2);
  ASSERT_TRUE(t->settled(1, 1, 2));
  ::testing::internal::CaptureStderr();
  t->stop();
  const std::string printed = ::testing::internal::GetCapturedStderr();
  for (const char* stage : {"in.arrival_to_applied", "link.write_small", "link.copy_in", "link.write_u32", "link.fence"})
    EXPECT_NE(printed.find(stage), std::string::npos) << stage << " in:\n" << printed;
  EXPECT_NE(printed.find("dcuda proxy trace, process 0 (ranks 0..0)"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("out.ring_to_send"), std::string::npos) << printed;  // it sent nothing
}
