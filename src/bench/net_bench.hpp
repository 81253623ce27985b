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
  int window;           // messages in flight
  double seconds;
  double mib_per_s;     // 2^20 bytes per second
};
// Messages in flight when streaming messages of `bytes`: `requested` if positive, otherwise about
// 8 MiB worth, from 64 (large messages) to 1024 (8 KiB and smaller); never more than 512 MiB worth,
// at least 1. Why by size: on a 2-vCPU VM, measured side by side (bench/results/
// debian12-2core-net-window), 1024 in flight streamed 2-8 KiB messages 3-6% faster than 64 and
// 256-512 streamed 16 KiB (rendezvous) 3% faster, while 32-64 KiB gained nothing from 1024 and
// lost 3% with 4096.
int streaming_window(uint64_t bytes, int requested);

// Sends `messages` payloads of `bytes` with up to streaming_window(bytes, window) in flight; the
// best of `trials`.
ThroughputPoint put_throughput(client::Connection& c, uint64_t bytes, int messages, int window, int trials);
// The other direction: `messages` answers of `bytes` from the server's memory (wire::Ping::fill),
// the same number in flight per connection; the best of `trials`.
ThroughputPoint get_throughput(client::Connection& c, uint64_t bytes, int messages, int window, int trials);
// Both at once, from two threads on the one connection: each direction's rate over the time
// both took (a trial's slower direction bounds it); the best of `trials` by their sum.
std::pair<ThroughputPoint, ThroughputPoint> both_throughput(client::Connection& c, uint64_t bytes, int messages,
                                                            int window, int trials);

}  // namespace outboard::bench
