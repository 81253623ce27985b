// The host end of dcuda_log on the CPU: a thread plays the rank (writing records the way
// dcuda_device.cuh does), the printer prints them in order while it runs, frees the slots, and
// reports what a rank dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dcuda/detail/sync.hpp"
#include "dcuda/runtime/log_printer.hpp"

using namespace dcuda;
using detail::RankHost;

namespace {

// What the rank's thread 0 does in dcuda_log; false when the line was dropped.
bool log_line(RankHost& h, uint32_t& next, const char* text, int64_t value) {
  if (next - detail::load_acquire(&h.log_printed) >= detail::kLogSlots) {
    h.log_dropped++;
    return false;
  }
  detail::LogRecord& r = h.log[next % detail::kLogSlots];
  const size_t n = std::min(std::strlen(text), sizeof r.text - 1);  // as the device keeps it
  std::memcpy(r.text, text, n);
  r.text[n] = 0;
  r.value = value;
  r.time_ns = 1000000 + next;
  detail::store_release(&r.seq, next + 1);
  ++next;
  return true;
}

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  return s;
}

struct Region {
  std::vector<RankHost>* ranks = new std::vector<RankHost>(2);
  Region() { std::memset(static_cast<void*>(ranks->data()), 0, sizeof(RankHost) * ranks->size()); }
  ~Region() { delete ranks; }
};

}  // namespace

TEST(DcudaLog, PrintsEveryLineInOrderWhileTheRankWaitsForRoom) {
  Region region;
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  runtime::LogPrinter printer(region.ranks->data(), 2, 10, out);
  printer.start();
  std::thread rank([&] {  // 100 lines, four times the slots: waits for room instead of dropping
    uint32_t next = 0;
    for (int i = 0; i < 100; ++i)
      while (!log_line((*region.ranks)[1], next, "step", i)) (*region.ranks)[1].log_dropped--, std::this_thread::yield();
  });
  rank.join();
  printer.stop();
  const std::string text = read_all(out);
  size_t at = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string want = "dcuda rank 11 [";
    at = text.find(want, at);
    ASSERT_NE(at, std::string::npos) << "line " << i << " missing:\n" << text;
    const size_t colon = text.find("]: step " + std::to_string(i) + "\n", at);
    ASSERT_NE(colon, std::string::npos) << "line " << i;
    at = colon;
  }
  EXPECT_EQ(text.find("dropped"), std::string::npos);
  EXPECT_EQ((*region.ranks)[1].log_printed, 100u);
  std::fclose(out);
}

TEST(DcudaLog, ALineTooFastIsDroppedAndReportedNotWaitedFor) {
  Region region;
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  runtime::LogPrinter printer(region.ranks->data(), 2, 0, out);
  uint32_t next = 0;
  int kept = 0;
  for (int i = 0; i < 40; ++i) kept += log_line((*region.ranks)[0], next, "a text longer than the thirty-nine bytes a record keeps", i);
  EXPECT_EQ(kept, static_cast<int>(detail::kLogSlots));
  printer.stop();  // not started: prints what is there and the drops
  const std::string text = read_all(out);
  EXPECT_NE(text.find("dcuda rank 0 [0.000000 s]: a text longer than the thirty-nine byte 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("dcuda rank 0: 24 log lines dropped"), std::string::npos) << text;
  EXPECT_EQ(printer.drain(), 0u);
  std::fclose(out);
}
