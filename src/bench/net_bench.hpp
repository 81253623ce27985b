// Client-to-server benchmarks over an Outboard connection: round trip of a minimal request, and
// bulk throughput of streamed payloads.
#pragma once
#include <cstdint>
#include <vector>

#include "client/connection.hpp"

namespace outboard::bench {

struct Summary {
  double median, p99, min, mean;  // in the samples' unit
};
Summary summarize(std::vector<double> samples);

// Round-trip times in microseconds of `iterations` pings without payload, after `warmup`.
std::vector<double> round_trips_us(client::Connection& c, int iterations, int warmup);

struct ThroughputPoint {
  uint64_t bytes;       // per message
  int messages;
  double seconds;
  double mib_per_s;     // 2^20 bytes per second
};
// Sends `messages` payloads of `bytes` with up to `window` in flight; the best of `trials`.
ThroughputPoint put_throughput(client::Connection& c, uint64_t bytes, int messages, int window, int trials);

}  // namespace outboard::bench
