// The CUDA plugin loader: on a GPU host it loads and sees a device; anywhere else it says why not
// (and the GPU checks are skipped).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backends/cuda/loader.hpp"

using outboard::cuda::CudaPlugin;

TEST(CudaLoader, LoadsOrSaysWhy) {
  std::string why;
  auto plugin = CudaPlugin::load(why);
  if (!plugin) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << why;
  }
  EXPECT_GT(plugin->device_count(), 0);
  EXPECT_EQ(plugin->api().version, static_cast<uint32_t>(OUTBOARD_CUDA_API_VERSION));
  outboard_cuda_device_info info{};
  ASSERT_EQ(plugin->api().device_describe(0, &info), OUTBOARD_CUDA_OK) << plugin->error(-1);
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_GT(info.runtime_version, 0);
}

TEST(CudaLoader, GpuRoundTrip) {
  std::string why;
  auto plugin = CudaPlugin::load(why);
  if (!plugin) GTEST_SKIP() << why;
  const auto& api = plugin->api();
  ASSERT_EQ(api.set_device(0), OUTBOARD_CUDA_OK);
  constexpr uint64_t bytes = 1 << 20;
  void *dev = nullptr, *host = nullptr;
  ASSERT_EQ(api.device_alloc(&dev, bytes), OUTBOARD_CUDA_OK) << plugin->error(-1);
  ASSERT_EQ(api.host_alloc_pinned(&host, bytes), OUTBOARD_CUDA_OK) << plugin->error(-1);
  auto* h = static_cast<unsigned char*>(host);
  for (uint64_t i = 0; i < bytes; ++i) h[i] = static_cast<unsigned char>(i * 7);
  EXPECT_EQ(api.memcpy_sync(OUTBOARD_CUDA_H2D, dev, host, bytes, nullptr), OUTBOARD_CUDA_OK);
  for (uint64_t i = 0; i < bytes; ++i) h[i] = 0;
  EXPECT_EQ(api.memcpy_sync(OUTBOARD_CUDA_D2H, host, dev, bytes, nullptr), OUTBOARD_CUDA_OK);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < bytes; ++i) wrong += h[i] != static_cast<unsigned char>(i * 7);
  EXPECT_EQ(wrong, 0u);
  float ms = -1;
  EXPECT_EQ(api.timed_copy(OUTBOARD_CUDA_H2D, dev, host, bytes, 4, &ms), OUTBOARD_CUDA_OK) << plugin->error(-1);
  EXPECT_GT(ms, 0.0f);
  EXPECT_EQ(api.memcpy_sync(42, dev, host, bytes, nullptr), OUTBOARD_CUDA_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(api.host_free_pinned(host), OUTBOARD_CUDA_OK);
  EXPECT_EQ(api.device_free(dev), OUTBOARD_CUDA_OK);
}

TEST(CudaLoader, MissingPluginNamesThePath) {
  setenv("OUTBOARD_CUDA_PLUGIN", "/nonexistent/liboutboard-cuda.so", 1);
  std::string why;
  auto plugin = CudaPlugin::load(why);
  unsetenv("OUTBOARD_CUDA_PLUGIN");
  EXPECT_FALSE(plugin.has_value());
  EXPECT_NE(why.find("/nonexistent/liboutboard-cuda.so"), std::string::npos) << why;
}

TEST(CudaLoader, RefusesAPluginOfAnotherInterfaceVersion) {
  setenv("OUTBOARD_CUDA_PLUGIN", OUTBOARD_OLD_CUDA_PLUGIN, 1);
  std::string why;
  auto plugin = CudaPlugin::load(why);
  unsetenv("OUTBOARD_CUDA_PLUGIN");
  EXPECT_FALSE(plugin.has_value());
  EXPECT_NE(why.find("interface version 1, this program needs version " + std::to_string(OUTBOARD_CUDA_API_VERSION)),
            std::string::npos)
      << why;
}
