// The proxy's CUDA device link on a real GPU: small writes (one cuStreamBatchMemOp of value
// writes, then the counter) land every byte they should and no other, which ones take value
// writes, and memory the driver refuses them for (managed memory, stream-ordered pools) is copied
// instead. They skip where no GPU can be used.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_link.hpp"
#include "need_gpu.hpp"

namespace {

using dcuda::cuda::CudaLink;
using dcuda::runtime::DeviceLink;

// Waits for everything issued on the link so far.
void drain(CudaLink& link) {
  bool done = false;
  link.fence([&done] { done = true; });
  while (!done) link.poll();
}

std::vector<unsigned char> read(const void* device, size_t bytes) {
  std::vector<unsigned char> v(bytes);
  EXPECT_EQ(cudaMemcpy(v.data(), device, bytes, cudaMemcpyDefault), cudaSuccess);
  return v;
}

}  // namespace

TEST(DcudaCudaLink, SmallWritesLandTheirBytesAndCounterOnly) {
  NEED_GPU();
  CudaLink link(0);
  unsigned char* window = nullptr;
  uint32_t* counter = nullptr;
  ASSERT_EQ(cudaMalloc(&window, 64), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&counter, 4), cudaSuccess);
  uint32_t notes = 0;
  for (size_t offset : {0, 4, 8, 12}) {
    for (size_t bytes : {4, 8, 12, 16}) {
      SCOPED_TRACE("offset " + std::to_string(offset) + ", " + std::to_string(bytes) + " bytes");
      ASSERT_EQ(cudaMemset(window, 0, 64), cudaSuccess);
      unsigned char src[16];
      for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(offset * 16 + bytes + i + 1);
      // Two 8-byte writes at most: 16 bytes only at an 8-byte boundary (the window is aligned).
      const bool fits = offset % 8 == 0 || bytes <= 12;
      EXPECT_EQ(link.small_write_fits(window + offset, bytes), fits);
      link.write_small(window + offset, src, bytes, counter, ++notes);  // else DeviceLink's copy
      std::memset(src, 0xee, sizeof src);  // taken at the call
      drain(link);
      const auto got = read(window, 64);
      for (size_t i = 0; i < 64; ++i) {
        const bool inside = i >= offset && i < offset + bytes;
        ASSERT_EQ(got[i], inside ? static_cast<unsigned char>(offset * 16 + bytes + (i - offset) + 1) : 0) << "byte " << i;
      }
      uint32_t c = 0;
      ASSERT_EQ(cudaMemcpy(&c, counter, 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(c, notes);
    }
  }
  // Without a counter (a plain put), and what never fits.
  const uint32_t word = 0xa5a5a5a5;
  link.write_small(window + 32, &word, 4, nullptr, 0);
  drain(link);
  EXPECT_EQ(read(window + 32, 4), std::vector<unsigned char>(4, 0xa5));
  EXPECT_FALSE(link.small_write_fits(window, DeviceLink::kSmallWriteMaxBytes + 8));
  EXPECT_FALSE(link.small_write_fits(window + 2, 4));
  EXPECT_FALSE(link.small_write_fits(window, 6));
  cudaFree(window);
  cudaFree(counter);
}

TEST(DcudaCudaLink, MemoryWithoutValueWritesIsCopied) {
  NEED_GPU();
  CudaLink link(0);
  uint32_t* counter = nullptr;
  ASSERT_EQ(cudaMalloc(&counter, 4), cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  void* managed = nullptr;
  void* pooled = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 4096), cudaSuccess);
  ASSERT_EQ(cudaMallocAsync(&pooled, 4096, stream), cudaSuccess);
  ASSERT_EQ(cudaMemset(managed, 0, 4096), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(pooled, 0, 4096, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  uint32_t notes = 0;
  for (unsigned char* memory : {static_cast<unsigned char*>(managed), static_cast<unsigned char*>(pooled)}) {
    const uint64_t value = 0x0102030405060708ull;
    link.write_small(memory + 64, &value, 8, counter, ++notes);  // refused by the driver: copied
    drain(link);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // and nothing left behind
    uint64_t got = 0;
    ASSERT_EQ(cudaMemcpy(&got, memory + 64, 8, cudaMemcpyDefault), cudaSuccess);
    EXPECT_EQ(got, value);
    uint32_t c = 0;
    ASSERT_EQ(cudaMemcpy(&c, counter, 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(c, notes);
    EXPECT_FALSE(link.small_write_fits(memory + 128, 8));  // the allocation is now known
  }
  unsigned char* plain = nullptr;
  ASSERT_EQ(cudaMalloc(&plain, 64), cudaSuccess);
  EXPECT_TRUE(link.small_write_fits(plain, 8));  // other memory still takes value writes
  cudaFree(plain);
  cudaFree(managed);
  cudaFreeAsync(pooled, stream);
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  cudaFree(counter);
}

TEST(DcudaCudaLink, SmallWritesCanBeTurnedOff) {
  NEED_GPU();
  setenv("DCUDA_PROXY_SMALL_WRITES", "0", 1);
  CudaLink link(0);
  unsetenv("DCUDA_PROXY_SMALL_WRITES");
  void* window = nullptr;
  ASSERT_EQ(cudaMalloc(&window, 64), cudaSuccess);
  EXPECT_FALSE(link.small_write_fits(window, 4));
  cudaFree(window);
}
