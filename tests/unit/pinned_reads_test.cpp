// The OpenCL backend's page-locked read slots (pinned_reads.hpp) on the host's real OpenCL
// platform (PoCL in CI): a queue's slots are handed out until all are taken, come back when
// their buffer (and every copy of its owner) is gone, outlive the queue while a read holds one,
// and a read really lands in one.
#include "backends/opencl/pinned_reads.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "opencl_context_test.hpp"

namespace outboard::backends {
namespace {

// The context, and a queue on it.
class PinnedReadsTest : public OpenClContextTest {
 protected:
  void SetUp() override {
    OpenClContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cl_int rc = CL_SUCCESS;
    queue_ = clCreateCommandQueue(context_, device_, 0, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
  }
  void TearDown() override {
    if (queue_) clReleaseCommandQueue(queue_);
    OpenClContextTest::TearDown();
  }
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
