// The payload buffer cache: released buffers are reused, and when the cache is full the least
// recently released make room (so a program's current sizes stay cached).
#include <gtest/gtest.h>

#include <cstdlib>

#include "transport/buffer.hpp"

using outboard::transport::Buffer;
using outboard::transport::HostAllocator;

namespace {
int allocations = 0, releases = 0;
void* counted_allocate(size_t bytes) {
  ++allocations;
  return std::malloc(bytes);
}
void counted_release(void* p) {
  ++releases;
  std::free(p);
}
const HostAllocator kCounted{counted_allocate, counted_release};
}  // namespace

TEST(BufferCache, ReusesAndEvictsTheOldest) {
  constexpr size_t MiB = 1 << 20;
  Buffer::set_cache_limit(0);  // start empty
  Buffer::set_cache_limit(8 * MiB);
  allocations = releases = 0;
  {
    Buffer a = Buffer::allocate(4 * MiB, &kCounted);  // capacities are whole 2 MiB pages from 2 MiB up
    Buffer b = Buffer::allocate(2 * MiB, &kCounted);
    Buffer c = Buffer::allocate(6 * MiB, &kCounted);
    EXPECT_EQ(allocations, 3);
    a = Buffer();  // cached: 4 MiB
    b = Buffer();  // cached: 6 MiB
    EXPECT_EQ(releases, 0);
    c = Buffer();  // 6 more MiB: the oldest (a) makes room; b stays
    EXPECT_EQ(releases, 1);
  }
  Buffer again = Buffer::allocate(6 * MiB, &kCounted);  // the most recent size is still there
  EXPECT_EQ(allocations, 3);
  Buffer second = Buffer::allocate(2 * MiB, &kCounted);  // so is b
  EXPECT_EQ(allocations, 3);
  Buffer other = Buffer::allocate(4 * MiB, &kCounted);  // evicted: allocated afresh
  EXPECT_EQ(allocations, 4);
  second = Buffer();
  again = Buffer();
  other = Buffer();
  Buffer::set_cache_limit(0);  // lowering the limit gives everything back
  EXPECT_EQ(releases, allocations);
  Buffer::set_cache_limit(256 * MiB);
}

TEST(BufferCache, LargerThanTheLimitIsNotKept) {
  constexpr size_t MiB = 1 << 20;
  Buffer::set_cache_limit(4 * MiB);
  allocations = releases = 0;
  { Buffer big = Buffer::allocate(16 * MiB, &kCounted); }
  EXPECT_EQ(releases, 1);
  Buffer::set_cache_limit(256 * MiB);
}

TEST(BufferCache, ReleasesChosenCachedBuffersOfOneAllocator) {
  constexpr size_t MiB = 1 << 20;
  Buffer::set_cache_limit(0);
  Buffer::set_cache_limit(64 * MiB);
  allocations = releases = 0;
  static const void* keep = nullptr;
  {
    Buffer a = Buffer::allocate(4 * MiB, &kCounted);
    Buffer b = Buffer::allocate(8 * MiB, &kCounted);
    Buffer heap = Buffer::allocate(8 * MiB);  // another allocator's: never touched
    keep = b.data();
  }
  EXPECT_EQ(releases, 0);  // all three cached
  Buffer::release_cached(&kCounted, [](const void* p) { return p != keep; });
  EXPECT_EQ(releases, 1);  // a went back; b stays cached and is reused
  Buffer again = Buffer::allocate(8 * MiB, &kCounted);
  EXPECT_EQ(again.data(), keep);
  EXPECT_EQ(allocations, 2);
}
