// The server core's shared call machinery (server/core.hpp), on a core that sends nothing.
#include <gtest/gtest.h>

#include <cstdlib>

#include "quiet_core.hpp"

namespace outboard::server {
namespace {

// Found by fuzz_session: a LAPACK call with every dimension 0 reached memcpy with a null pointer
// (undefined behaviour even for 0 bytes), as a Level-3 call with an empty output reached memset.
TEST(Core, AnEmptyCallStillGetsMemory) {
  QuietCore core;
  Session s;
  transport::Buffer payload;
  ASSERT_TRUE(core.whole_payload(s, payload, 0, 0));
  EXPECT_NE(payload.data(), nullptr);
  EXPECT_EQ(s.held_bytes, payload.size());  // held like any call's memory, released with its reply
  EXPECT_TRUE(core.rejected.empty());
}

TEST(Core, ACallWithoutItsPayloadIsRejected) {
  QuietCore core;
  Session s;
  transport::Buffer payload;
  EXPECT_FALSE(core.whole_payload(s, payload, 64, 128));
  EXPECT_EQ(core.rejected, "payload size does not match the call");
  EXPECT_EQ(s.held_bytes, 0u);
}

TEST(Core, AReceivedPayloadIsTheCallsMemory) {
  QuietCore core;
  Session s;
  transport::Buffer payload = transport::Buffer::allocate(128);
  std::byte* landed = payload.data();
  ASSERT_TRUE(core.whole_payload(s, payload, 64, 128));
  EXPECT_EQ(payload.data(), landed);
  EXPECT_EQ(s.held_bytes, 0u);  // counted when it landed (receive_call), not again
}

}  // namespace
}  // namespace outboard::server
