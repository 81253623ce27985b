#include "bench/net_bench.hpp"

#include <algorithm>
#include <numeric>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "transport/buffer.hpp"

namespace outboard::bench {

Summary summarize(std::vector<double> v) {
  if (v.empty()) return {0, 0, 0, 0};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]; };
  return {at(0.5), at(0.99), v.front(), std::accumulate(v.begin(), v.end(), 0.0) / v.size()};
}

std::vector<double> round_trips_us(client::Connection& c, int iterations, int warmup) {
  std::vector<double> out;
  out.reserve(iterations);
  for (int i = 0; i < warmup + iterations; ++i) {
    uint64_t t0 = now_ns();
    auto reply = c.request(wire::Ping{}, {}, nullptr, 0, 10);
    uint64_t t1 = now_ns();
    if (!std::holds_alternative<wire::Pong>(reply)) throw Error("unexpected answer to a ping");
    if (i >= warmup) out.push_back((t1 - t0) / 1e3);
  }
  return out;
}

int streaming_window(uint64_t bytes, int requested) {
  bytes = std::max<uint64_t>(bytes, 1);
  const uint64_t wanted = requested > 0 ? uint64_t(requested) : std::clamp<uint64_t>((8ull << 20) / bytes, 64, 1024);
  return static_cast<int>(std::clamp<uint64_t>(std::min<uint64_t>(wanted, (512ull << 20) / bytes), 1, INT32_MAX));
}

ThroughputPoint put_throughput(client::Connection& c, uint64_t bytes, int messages, int window, int trials) {
  window = streaming_window(bytes, window);
  transport::Buffer data = transport::Buffer::allocate(bytes);
  std::fill_n(reinterpret_cast<unsigned char*>(data.data()), bytes, 0x5a);  // touch every page before timing
  c.ping_stream(data.data(), bytes, std::min(messages, window), window);    // warm-up
  ThroughputPoint best{bytes, messages, window, 0, 0};
  for (int t = 0; t < trials; ++t) {
    uint64_t t0 = now_ns();
    c.ping_stream(data.data(), bytes, messages, window);
    double s = (now_ns() - t0) / 1e9;
    if (best.seconds == 0 || s < best.seconds) best.seconds = s;
  }
  best.mib_per_s = double(bytes) * messages / best.seconds / (1 << 20);
  return best;
}

}  // namespace outboard::bench
