// The GPU backend's page-locked staging reserve (backends::CudaOptions::pinned_reserve_bytes):
// locked once as the backend is made, then staging comes from it and goes back to it; what does
// not fit is locked per call. Skips where no GPU can be used.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/cuda/cuda_backend.hpp"
#include "transport/buffer.hpp"

using namespace outboard;

TEST(PinnedReserve, StagingComesFromTheReserveOnceLocked) {
  std::string why;
  auto gpu = backends::make_cuda_backend(why, 0, {0, 0, 8, 64u << 20});
  if (!gpu) GTEST_SKIP() << "no GPU: " << why;
  auto reserve = [&] { return gpu->describe()["pinned_reserve"]; };
  if (reserve()["bytes"] != 64u << 20) GTEST_SKIP() << "another backend in this process made the reserve first";
  ASSERT_EQ(reserve()["state"], "ready") << reserve().dump();
  transport::Buffer::set_cache_limit(0);  // released staging goes straight back to the reserve
  {
    auto a = transport::Buffer::allocate(16u << 20, gpu->staging());
    auto b = transport::Buffer::allocate(40u << 20, gpu->staging());
    std::memset(a.data(), 1, a.size());
    std::memset(b.data(), 2, b.size());
    EXPECT_EQ(reserve()["in_use"], 56u << 20);
    auto over = transport::Buffer::allocate(32u << 20, gpu->staging());  // no room left: locked per call
    EXPECT_EQ(reserve()["misses"], 1);
    std::vector<std::byte> back(b.size());
    gpu->device_round_trip(b.data(), reinterpret_cast<std::byte*>(back.data()), b.size());
    EXPECT_EQ(std::memcmp(back.data(), b.data(), b.size()), 0);
  }
  EXPECT_EQ(reserve()["in_use"], 0);
  EXPECT_EQ(reserve()["largest_free"], 64u << 20);
  // Released staging kept in the buffer cache holds reserve room; a call that needs the room
  // gets it back from the cache.
  transport::Buffer::set_cache_limit(1u << 30);
  { auto cached = transport::Buffer::allocate(40u << 20, gpu->staging()); }
  EXPECT_EQ(reserve()["in_use"], 40u << 20);
  {
    auto big = transport::Buffer::allocate(60u << 20, gpu->staging());
    EXPECT_EQ(reserve()["in_use"], 60u << 20);
    EXPECT_EQ(reserve()["misses"], 1);
  }
}
