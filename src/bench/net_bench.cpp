#include "bench/net_bench.hpp"

#include <algorithm>
#include <numeric>
#include <thread>

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

namespace {
// The best of `trials` timed runs of `run(messages)`, after one untimed of a window's worth.
template <class Run>
ThroughputPoint best_of(uint64_t bytes, int messages, int window, int trials, Run run) {
  run(std::min(messages, window));  // warm-up
  ThroughputPoint best{bytes, messages, window, 0, 0};
  for (int t = 0; t < trials; ++t) {
    uint64_t t0 = now_ns();
    run(messages);
    double s = (now_ns() - t0) / 1e9;
    if (best.seconds == 0 || s < best.seconds) best.seconds = s;
  }
  best.mib_per_s = double(bytes) * messages / best.seconds / (1 << 20);
  return best;
}
}  // namespace

ThroughputPoint put_throughput(client::Connection& c, uint64_t bytes, int messages, int window, int trials) {
  window = streaming_window(bytes, window);
  transport::Buffer data = transport::Buffer::allocate(bytes);
  std::fill_n(reinterpret_cast<unsigned char*>(data.data()), bytes, 0x5a);  // touch every page before timing
  return best_of(bytes, messages, window, trials, [&](int n) { c.ping_stream(data.data(), bytes, n, window); });
}

ThroughputPoint get_throughput(client::Connection& c, uint64_t bytes, int messages, int window, int trials) {
  window = streaming_window(bytes, window);
  transport::Buffer into = transport::Buffer::allocate(bytes);
  std::fill_n(reinterpret_cast<unsigned char*>(into.data()), bytes, 0);  // touch every page before timing
  return best_of(bytes, messages, window, trials, [&](int n) { c.fill_stream(into.data(), bytes, n, window); });
}

std::pair<ThroughputPoint, ThroughputPoint> both_throughput(client::Connection& c, uint64_t bytes, int messages,
                                                            int window, int trials) {
  window = streaming_window(bytes, window);
  transport::Buffer out = transport::Buffer::allocate(bytes), into = transport::Buffer::allocate(bytes);
  std::fill_n(reinterpret_cast<unsigned char*>(out.data()), bytes, 0x5a);
  std::fill_n(reinterpret_cast<unsigned char*>(into.data()), bytes, 0);
  ThroughputPoint put{bytes, messages, window, 0, 0}, get = put;
  double best_sum = 0;
  for (int t = 0; t <= trials; ++t) {  // trial 0 warms up
    const int n = t == 0 ? std::min(messages, window) : messages;
    std::exception_ptr failed;
    uint64_t t0 = now_ns(), put_ns = 0;
    std::thread sender([&] {
      try {
        c.ping_stream(out.data(), bytes, n, window);
      } catch (...) {
        failed = std::current_exception();
      }
      put_ns = now_ns() - t0;
    });
    std::exception_ptr get_failed;  // the sender is joined first, whatever happens here
    try {
      c.fill_stream(into.data(), bytes, n, window);
    } catch (...) {
      get_failed = std::current_exception();
    }
    const uint64_t get_ns = now_ns() - t0;
    sender.join();
    if (get_failed) std::rethrow_exception(get_failed);
    if (failed) std::rethrow_exception(failed);
    if (t == 0) continue;
    const double put_s = put_ns / 1e9, get_s = get_ns / 1e9;
    const double put_rate = double(bytes) * n / put_s / (1 << 20), get_rate = double(bytes) * n / get_s / (1 << 20);
    if (put_rate + get_rate > best_sum) {
      best_sum = put_rate + get_rate;
      put.seconds = put_s, put.mib_per_s = put_rate;
      get.seconds = get_s, get.mib_per_s = get_rate;
    }
  }
  return {put, get};
}

}  // namespace outboard::bench
