// A native OpenCL call that does not return (backends/opencl/native_watch.hpp): reported, its
// platform refused while it lasts and served again after; other platforms, builds and calls within
// their patience untouched.
#include "backends/opencl/native_watch.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace outboard::backends::opencl {
namespace {

using namespace std::chrono_literals;

TEST(NativeWatch, ACallPastItsPatienceRefusesItsPlatformUntilItReturns) {
  NativeWatch watch({"Alpha", "Beta"});
  auto slot = watch.open(20ms);
  {
    NativeWatch::Running running(*slot, "write", true);
    slot->platform = 2;
    std::this_thread::sleep_for(40ms);
    watch.scan();
    EXPECT_TRUE(watch.refusing(2));
    EXPECT_FALSE(watch.refusing(1));  // another platform serves on
    const auto stuck = watch.stuck();
    ASSERT_EQ(stuck.size(), 1u);
    EXPECT_EQ(stuck[0].operation, "write");
    EXPECT_EQ(stuck[0].platform, 2u);
    EXPECT_GE(stuck[0].seconds, 0.02);
    const std::string why = watch.refusal(2);
    EXPECT_NE(why.find("\"Beta\""), std::string::npos) << why;
    EXPECT_NE(why.find("write"), std::string::npos) << why;
  }
  watch.scan();  // it returned
  EXPECT_FALSE(watch.refusing(2));
  EXPECT_TRUE(watch.stuck().empty());
  EXPECT_EQ(watch.refusal(2), "");
}

TEST(NativeWatch, CallsWithinTheirPatienceBuildsAndUnknownPlatformsRefuseNothing) {
  NativeWatch watch({"Alpha"});
  auto patient = watch.open(10s);
  auto unwatched = watch.open(0ms);  // opencl_stuck_seconds = 0
  auto builder = watch.open(10ms);
  auto unknown = watch.open(10ms);
  NativeWatch::Running a(*patient, "write", true);
  NativeWatch::Running b(*unwatched, "write", true);
  NativeWatch::Running c(*builder, "build_program", false);
  NativeWatch::Running d(*unknown, "release", true);
  patient->platform = unwatched->platform = builder->platform = 1;
  std::this_thread::sleep_for(30ms);
  watch.scan();
  EXPECT_FALSE(watch.refusing(1));
  ASSERT_EQ(watch.stuck().size(), 1u);  // the release, whose platform is not known: shown only
  EXPECT_EQ(watch.stuck()[0].operation, "release");
  EXPECT_FALSE(watch.refusing(0));
  EXPECT_FALSE(watch.refusing(7));  // no such platform
}

TEST(NativeWatch, TheMonitorFindsAStuckCallByItself) {
  NativeWatch watch({"Alpha"});
  auto slot = watch.open(10ms);
  NativeWatch::Running running(*slot, "ndrange", true);
  slot->platform = 1;
  bool refused = false;
  for (int i = 0; i < 400 && !refused; ++i) {  // the monitor looks every 250 ms
    std::this_thread::sleep_for(10ms);
    refused = watch.refusing(1);
  }
  EXPECT_TRUE(refused);
}

TEST(NativeWatch, AnEndedSessionLeavesNothingBehind) {
  NativeWatch watch({"Alpha"});
  {
    auto slot = watch.open(10ms);
    NativeWatch::Running running(*slot, "write", true);
    slot->platform = 1;
    std::this_thread::sleep_for(20ms);
    watch.scan();
    EXPECT_TRUE(watch.refusing(1));
  }
  watch.scan();
  EXPECT_FALSE(watch.refusing(1));
  EXPECT_TRUE(watch.stuck().empty());
}

}  // namespace
}  // namespace outboard::backends::opencl
