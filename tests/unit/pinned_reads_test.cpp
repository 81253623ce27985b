// The OpenCL backend's page-locked read slots (pinned_reads.hpp) on the host's real OpenCL
// platform (PoCL in CI): a queue's slots are handed out until all are taken, come back when
// their buffer (and every copy of its owner) is gone, outlive the queue while a read holds one,
// and a read really lands in one.
#include "backends/opencl/pinned_reads.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace outboard::backends {
namespace {

class PinnedReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_platform_id platform;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0) GTEST_SKIP() << "no OpenCL platform";
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr) != CL_SUCCESS) GTEST_SKIP() << "no device";
    cl_int rc = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
    queue_ = clCreateCommandQueue(context_, device_, 0, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
  }
  void TearDown() override {
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
  }
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

TEST_F(PinnedReadsTest, SlotsRunOutAndComeBack) {
  auto slots = PinnedReads::make(queue_);
  ASSERT_TRUE(slots);
  EXPECT_FALSE(slots->take(PinnedReads::kSlotBytes + 1)) << "larger than a slot";
  std::vector<transport::Buffer> taken;
  for (uint32_t i = 0; i < PinnedReads::kSlots; ++i) {
    auto b = slots->take(i + 1);
    ASSERT_TRUE(b) << "slot " << i;
    EXPECT_EQ(b->size(), i + 1);
    for (const auto& other : taken) EXPECT_NE(other.data(), b->data());
    taken.push_back(std::move(*b));
  }
  EXPECT_FALSE(slots->take(4)) << "all taken";
  std::byte* const freed = taken.back().data();
  taken.pop_back();
  auto again = slots->take(PinnedReads::kSlotBytes);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->data(), freed);
}

TEST_F(PinnedReadsTest, AReadLandsInASlotThatOutlivesItsQueue) {
  auto slots = PinnedReads::make(queue_);
  ASSERT_TRUE(slots);
  cl_int rc = CL_SUCCESS;
  const char text[] = "page-locked";
  cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof text,
                              const_cast<char*>(text), &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  auto slot = slots->take(sizeof text);
  ASSERT_TRUE(slot);
  slots.reset();  // the session dropped the queue's slots: the read's buffer keeps them
  ASSERT_EQ(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, sizeof text, slot->data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(std::memcmp(slot->data(), text, sizeof text), 0);
  clReleaseMemObject(mem);
  *slot = transport::Buffer();  // the last owner: the slots unmap and go
}

}  // namespace
}  // namespace outboard::backends
