// The proxy's stage trace (DCUDA_PROXY_TRACE=1): where a command's time goes inside the proxies,
// to set against the one-way latency a rank sees. Per stage, a histogram of durations taken with
// the monotonic clock; at the proxy's end one line per stage to stderr (count, median, p90, p99,
// max in microseconds). Stages:
//
//   out.ring_to_send     a command seen in a rank's ring -> handed to the transport (includes the
//                        device -> host copy of a payload that was not staged)
//   out.send_call        the transport's send call itself
//   in.arrival_to_applied  the message delivered (on_put) -> its link calls returned (includes
//                        waiting for earlier commands of its stream)
//   link.copy_in, link.write_u32, link.write_small, link.fence  each link call of an apply
//
// Off, a stage costs one branch on a bool read once at the proxy's start; on, two clock reads and
// a histogram increment, no allocation (the histograms are allocated once, at the start).
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "common/clock.hpp"
#include "common/latency_histogram.hpp"

namespace dcuda::runtime::proxy_detail {

using outboard::LatencyHistogram;

class ProxyTrace {
 public:
  enum Stage : uint32_t { ring_to_send, send_call, arrival_to_applied, copy_in, write_u32, write_small, fence, kStages };
  static const char* name(Stage s);

  // On when DCUDA_PROXY_TRACE is set to anything but "" or "0".
  ProxyTrace();
  explicit ProxyTrace(bool on);

  bool on() const { return on_; }
  // A start time for record(): the clock when on, 0 (and no clock read) when off.
  uint64_t start() const { return on_ ? outboard::now_ns() : 0; }
  // The time from `started` (a start() of the same trace) to now, into stage s.
  void record(Stage s, uint64_t started) {
    if (on_) stages_[s].add(outboard::now_ns() - started);
  }
  const LatencyHistogram& stage(Stage s) const { return stages_[s]; }

  // One line per stage that saw anything, each starting with `who`; nothing when off.
  void print(std::FILE* to, const std::string& who) const;

 private:
  bool on_;
  std::unique_ptr<LatencyHistogram[]> stages_;  // kStages of them, only when on
};

}  // namespace dcuda::runtime::proxy_detail
