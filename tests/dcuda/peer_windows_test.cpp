// The proxy's side of the path between processes of one host (peer_windows.hpp) on the CPU: what
// a same-host peer tells about its windows lands in the table our ranks read, mapped through the
// device link; anything that is not the peer's to say, or does not fit its allocation, is a
// protocol error and touches nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "dcuda/runtime/peer_windows.hpp"

using namespace dcuda;
using namespace dcuda::runtime;
using namespace dcuda::runtime::proxy_detail;
using outboard::ProtocolError;

namespace {

// A link whose "other process's memory" is a buffer of this one.
struct MappingLink final : DeviceLink {
  std::vector<uint8_t> memory = std::vector<uint8_t>(1 << 20);
  int maps = 0;
  void copy_in(void*, const void*, size_t, std::function<void()>) override {}
  void write_u32(uint32_t*, uint32_t) override {}
  void copy_out(void*, const void*, size_t, std::function<void()>) override {}
  bool poll() override { return false; }
  bool idle() const override { return true; }
  void* map_shared(const SharedMemory& m) override {
    ++maps;
    if (m.bytes > memory.size()) throw std::runtime_error("smaller than announced");
    return memory.data();
  }
};

struct Fixture {
  MappingLink link;
  Context c;
  std::vector<detail::WindowEntry> table;
  Fixture(bool same_host = true, bool mapped = true) {
    c.link = &link;
    c.world.self = 0;
    c.world.processes = {{0, 2, "a:1", "00", "h", ""}, {2, 3, "b:1", "00", "h", ""}};  // ranks 0-1 ours, 2-4 theirs
    c.peers.assign(2, Peer{});
    c.same_host = {0, static_cast<uint8_t>(same_host)};
    c.mapped = {0, static_cast<uint8_t>(mapped)};
    table.assign(5 * detail::kMaxWindows, detail::WindowEntry{0, 0});
    c.peer_windows = table.data();
  }
};

msg::Window window(uint32_t rank, uint32_t id, uint64_t offset, uint64_t bytes, uint64_t allocation = 1 << 20) {
  msg::Window w;
  w.rank = rank, w.window = id, w.offset = offset, w.bytes = bytes, w.allocation_bytes = allocation;
  w.handle[0] = 7;
  return w;
}

}  // namespace

TEST(PeerWindows, AWindowOfAPeerRankLandsMappedInTheTable) {
  Fixture f;
  PeerWindows w(f.c);
  w.on_window(1, window(3, 5, 4096, 65536));
  const detail::WindowEntry& e = f.table[3 * detail::kMaxWindows + 5];
  EXPECT_EQ(e.base, reinterpret_cast<uint64_t>(f.link.memory.data() + 4096));
  EXPECT_EQ(e.bytes, 65536u);
  EXPECT_TRUE(w.complete(1, 1));
  EXPECT_FALSE(w.complete(1, 2));  // an arrival announcing two waits for the second
  w.on_window(1, window(3, 5, 0, 0));  // freed
  EXPECT_EQ(e.bytes, 0u);
  EXPECT_TRUE(w.complete(1, 2));
}

TEST(PeerWindows, WhatIsNotThePeersToSayIsRefusedAndTouchesNothing) {
  Fixture f;
  PeerWindows w(f.c);
  EXPECT_THROW(w.on_window(1, window(1, 0, 0, 64)), ProtocolError);            // our rank
  EXPECT_THROW(w.on_window(1, window(5, 0, 0, 64)), ProtocolError);            // nobody's rank
  EXPECT_THROW(w.on_window(1, window(2, detail::kMaxWindows, 0, 64)), ProtocolError);
  EXPECT_THROW(w.on_window(1, window(2, 0, 4096, 1 << 20)), ProtocolError);    // past its allocation
  EXPECT_THROW(w.on_window(1, window(2, 0, ~0ull, 2)), ProtocolError);         // offset wraps
  EXPECT_EQ(f.link.maps, 0);
  for (const auto& e : f.table) EXPECT_EQ(e.bytes, 0u);
  Fixture other_host(false, false);
  PeerWindows v(other_host.c);
  EXPECT_THROW(v.on_window(1, window(2, 0, 0, 64)), ProtocolError);
}

TEST(PeerWindows, AProcessWeDidNotMapIsCountedButNotMapped) {
  Fixture f(true, false);
  PeerWindows w(f.c);
  w.on_window(1, window(2, 0, 0, 64));
  EXPECT_EQ(f.link.maps, 0);
  EXPECT_TRUE(w.complete(1, 1));
}
