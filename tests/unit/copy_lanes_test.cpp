// One-sided copies through CopyLanes into and out of memory a Worker registered (in this process,
// so CMA reaches it as it would another process on this host): data arrives intact on every lane,
// and keys or remotes that are unknown, another remote's or detached fail the copy.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "transport/copy_lanes.hpp"
#include "transport/transport.hpp"

using namespace outboard;
using transport::CopyLanes;

namespace {

// Waits for `n` completions, progressing the registering worker meanwhile (on transports that
// emulate one-sided copies with messages, its owner must progress).
bool wait_for(std::atomic<int>& done, int n, transport::Worker& owner) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (done.load() < n) {
    owner.progress();
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST(CopyLanes, GetsAndPutsOnEveryLane) {
  transport::Worker owner(transport::Events{});
  std::vector<uint32_t> remote(1 << 20);  // 4 MiB
  std::iota(remote.begin(), remote.end(), 7u);
  transport::Registration reg = owner.register_memory(remote.data(), remote.size() * 4);
  ASSERT_TRUE(reg.valid());
  ASSERT_FALSE(reg.key().empty());

  CopyLanes lanes(3);
  EXPECT_EQ(lanes.lanes(), 3u);
  CopyLanes::Remote r = lanes.attach(owner.address());
  CopyLanes::Key k = lanes.add_key(r, reg.key());

  // 16 pieces of 256 KiB spread over the lanes, one way or the other.
  std::vector<uint32_t> local(remote.size(), 0);
  const uint64_t piece = 64 * 1024;  // elements
  std::atomic<int> done{0}, failed{0};
  auto copy_all = [&](bool put) {
    done = 0;
    for (uint64_t i = 0; i < remote.size() / piece; ++i) {
      CopyLanes::Copy c{put, r, k, reinterpret_cast<uint64_t>(remote.data() + i * piece),
                        reinterpret_cast<std::byte*>(local.data() + i * piece), piece * 4};
      lanes.copy(static_cast<unsigned>(i), c, [&](bool ok) {
        if (!ok) ++failed;
        ++done;
      });
    }
    return wait_for(done, 16, owner);
  };
  ASSERT_TRUE(copy_all(false));  // gets
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(local, remote);

  for (auto& v : local) v ^= 0xdeadbeefu;  // puts: the local data, changed, goes back
  ASSERT_TRUE(copy_all(true));
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(local, remote);
  lanes.drop_key(k);
  lanes.detach(r);
}

TEST(CopyLanes, BadKeysAndRemotesFail) {
  transport::Worker owner(transport::Events{});
  std::vector<std::byte> remote(4096), local(4096);
  transport::Registration reg = owner.register_memory(remote.data(), remote.size());
  CopyLanes lanes(2);
  CopyLanes::Remote r = lanes.attach(owner.address());
  std::atomic<int> done{0}, failed{0};
  auto count = [&](bool ok) {
    if (!ok) ++failed;
    ++done;
  };
  const uint64_t at = reinterpret_cast<uint64_t>(remote.data());
  // A key that was never added, and one for another remote.
  lanes.copy(0, {false, r, 12345, at, local.data(), 64}, count);
  CopyLanes::Remote other = lanes.attach(owner.address());
  CopyLanes::Key other_key = lanes.add_key(other, reg.key());
  lanes.copy(1, {false, r, other_key, at, local.data(), 64}, count);
  // An unknown remote; a detached one.
  lanes.copy(0, {false, 999, other_key, at, local.data(), 64}, count);
  lanes.detach(other);
  lanes.copy(1, {false, other, other_key, at, local.data(), 64}, count);
  EXPECT_THROW(lanes.add_key(999, reg.key()), std::exception);
  ASSERT_TRUE(wait_for(done, 4, owner));
  EXPECT_EQ(failed.load(), 4);
}
