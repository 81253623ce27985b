// The device side of dcuda played by host threads, for the CPU tests of the proxy: each thread is
// one rank and talks to the proxy through the same ring, counter and layout headers the GPU
// code uses. "Device memory" is ordinary memory of this process (CpuLink copies into it).
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "dcuda/detail/command_ring.hpp"
#include "dcuda/detail/counters.hpp"
#include "dcuda/detail/layout.hpp"

namespace dcuda::test {

using namespace dcuda::detail;

// One process's ranks: their host and device regions and one window each.
struct Ranks {
  std::vector<RankHost> host;
  std::vector<RankDevice> device;
  std::vector<std::vector<unsigned char>> windows;
  Ranks(uint32_t ranks, size_t window_bytes) : host(ranks), device(ranks), windows(ranks) {
    std::memset(static_cast<void*>(host.data()), 0, sizeof(RankHost) * ranks);
    std::memset(static_cast<void*>(device.data()), 0, sizeof(RankDevice) * ranks);
    for (uint32_t r = 0; r < ranks; ++r) {
      windows[r].assign(window_bytes, 0);
      const WindowEntry w{reinterpret_cast<uint64_t>(windows[r].data()), window_bytes};
      host[r].windows[0] = device[r].windows[0] = w;
    }
  }
};

// What one rank does: post commands, wait for notifications, flush, and the world barrier.
class Rank {
 public:
  Rank(RankHost& host, RankDevice& device, uint32_t world_rank)
      : host_(host),
        device_(device),
        me_(world_rank),
        tail_(load_acquire(&host.proxy.consumed)),
        seen_(tail_ - kRingSlots) {}
  uint32_t me() const { return me_; }
  uint32_t posted() const { return tail_; }
  // Waits give up after this long (a test that hangs is a failed test) and, unless errors are
  // expected, when the proxy marks the rank failed.
  double timeout_s = 60;
  bool tolerate_failure = false;

  void put(uint32_t target, uint32_t window, uint64_t offset, const void* data, uint64_t bytes, bool staged,
           Op op = Op::put, uint32_t tag = 0) {
    Command c{};
    c.op = uint32_t(op), c.target = target, c.tag = tag, c.window = window, c.offset = offset, c.bytes = bytes;
    c.staged = staged;
    c.source = reinterpret_cast<uint64_t>(data);
    post(c, staged ? data : nullptr);
  }
  void notify(uint32_t target, uint32_t tag) {
    Command c{};
    c.op = uint32_t(Op::notify), c.target = target, c.tag = tag;
    post(c, nullptr);
  }
  void barrier_command(uint32_t generation) {
    Command c{};
    c.op = uint32_t(Op::barrier), c.generation = generation;
    post(c, nullptr);
  }
  void post(Command c, const void* staged) {
    // A failed proxy need not drain the ring: the device code gives up then too (dcuda_device.cuh),
    // also where failures are expected (a rank posting to a dead peer found its ring full and
    // waited out its timeout: dcuda_proxy_killed failed so once under load).
    wait_until([&] { return ring_has_room(host_, tail_, seen_) || failed(); }, "room in the ring");
    if (!ring_has_room(host_, tail_, seen_)) throw std::runtime_error("rank " + std::to_string(me_) + ": the proxy failed");
    if (staged) std::memcpy(ring_staging(host_, tail_), staged, c.bytes);
    Command& slot = ring_slot(host_, tail_);
    c.seq = slot.seq;  // written last, by ring_post
    slot = c;
    ring_post(host_, tail_++);
  }
  // Notifications of `tag` that have arrived and not been taken.
  uint32_t arrived(uint32_t tag) const {
    return waiting(load_acquire(&device_.device_notes[tag]), load_acquire(&device_.network_notes[tag]),
                   device_.consumed_notes[tag]);
  }
  bool test(uint32_t tag, uint32_t count = 1) {
    return take(load_acquire(&device_.device_notes[tag]), load_acquire(&device_.network_notes[tag]),
                device_.consumed_notes[tag], count);
  }
  void wait(uint32_t tag, uint32_t count = 1) {
    wait_until([&] { return test(tag, count); }, "notification of tag " + std::to_string(tag));
  }
  // dcuda_win_flush: every source posted so far may be reused.
  void flush() {
    wait_until([&] { return reached(load_acquire(&host_.proxy.completed), tail_); }, "flush");
  }
  void wait_released(uint32_t generation) {
    wait_until([&] { return reached(load_acquire(&host_.proxy.released), generation); }, "world barrier");
  }
  bool failed() const { return load_acquire(&host_.proxy.failed) != 0; }

  template <class Ready>
  void wait_until(Ready&& ready, const std::string& what) {
    const uint64_t end = outboard::now_ns() + static_cast<uint64_t>(timeout_s * 1e9);
    for (int spins = 0; !ready(); ++spins) {
      if (!tolerate_failure && failed()) throw std::runtime_error("rank " + std::to_string(me_) + ": proxy failed while waiting for " + what);
      if (outboard::now_ns() > end) throw std::runtime_error("rank " + std::to_string(me_) + ": timed out waiting for " + what);
      if (spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

 private:
  RankHost& host_;
  RankDevice& device_;
  uint32_t me_;
  uint32_t tail_;
  uint32_t seen_;  // the proxy's ring count as last read
};

}  // namespace dcuda::test
