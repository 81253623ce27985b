// The host end of dcuda's streaming log (dcuda_log): while a kernel runs, a thread prints the
// records the ranks write into their log slots in page-locked host memory (detail/layout.hpp) and
// tells each rank how far it has printed, so that the rank can reuse the slots. Lines go out as
// "dcuda rank R [T s]: text value", T the GPU clock since the first record this printer saw.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "dcuda/detail/layout.hpp"

namespace dcuda::runtime {

class LogPrinter {
 public:
  // Ranks host[0 .. ranks), world ranks first_rank onwards; lines to `out`.
  LogPrinter(detail::RankHost* host, uint32_t ranks, uint32_t first_rank, std::FILE* out);
  ~LogPrinter() { stop(); }
  LogPrinter(const LogPrinter&) = delete;
  LogPrinter& operator=(const LogPrinter&) = delete;

  void start();  // a thread looks every `kPeriodUs` until stop()
  // Stops the thread, prints what is left, and reports records the ranks dropped since the last
  // stop (one line per rank that dropped any).
  void stop();
  // Prints every record written so far; returns how many. (The thread's step; tests call it.)
  uint32_t drain();

  static constexpr int kPeriodUs = 200;

 private:
  detail::RankHost* host_;
  uint32_t ranks_, first_rank_;
  std::FILE* out_;
  uint64_t epoch_ns_ = 0;  // GPU time of the first record seen
  std::vector<uint32_t> dropped_seen_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace dcuda::runtime
