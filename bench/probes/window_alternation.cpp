// Probe: streaming throughput with different numbers of messages in flight, through the server's
// sink or not, measured side by side. One client process and one connection alternate the
// variants many times (the order rotating), so this shared machine's drift cancels in the
// per-pair ratios; the figures are the medians. Built with the project
// (build/bin/window_alternation). Usage:
//   window_alternation HOST:PORT TOKEN_FILE MIN_BYTES MAX_BYTES PAIRS VARIANT [VARIANT...]
// A VARIANT is a window, "size" (what `outboard bench net` uses by default:
// bench::streaming_window) or a number, optionally followed by "+headers": every message then
// carries its ping header instead of going into the sink (Connection::set_stream_sink(false)).
// Sizes double from MIN_BYTES to MAX_BYTES; each measurement is the best of 3 streams of ~20 ms.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/net_bench.hpp"
#include "client/connection.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "transport/buffer.hpp"

namespace {

using namespace outboard;

uint64_t positive(const char* text, const char* what) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (!*text || *end || v == 0 || v > (1ull << 30)) throw Error(std::string(what) + " must be a number from 1 to 2^30");
  return v;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s HOST:PORT TOKEN_FILE MIN_BYTES MAX_BYTES PAIRS VARIANT [VARIANT...]\n", argv[0]);
    return 2;
  }
  const uint64_t min_bytes = positive(argv[3], "MIN_BYTES"), max_bytes = positive(argv[4], "MAX_BYTES");
  const int pairs = static_cast<int>(std::min<uint64_t>(positive(argv[5], "PAIRS"), 1000));
  struct Variant {
    int window;  // 0: by size
    bool sink;
  };
  std::vector<Variant> windows;
  for (int i = 6; i < argc; ++i) {
    std::string w = argv[i];
    const bool headers = w.size() > 8 && w.ends_with("+headers");
    if (headers) w.resize(w.size() - 8);
    windows.push_back({w == "size" ? 0 : static_cast<int>(std::min<uint64_t>(positive(w.c_str(), "WINDOW"), 4096)), !headers});
  }
  client::Connection conn(client::parse_server_address(argv[1]), read_secret(argv[2]), "window-alternation", 10);
  transport::Buffer data = transport::Buffer::allocate(max_bytes);
  std::memset(data.data(), 0x5a, max_bytes);

  std::printf("%10s", "bytes");
  auto name = [](Variant v) { return (v.window ? "w" + std::to_string(v.window) : std::string("size")) + (v.sink ? "" : "+hdr"); };
  for (Variant w : windows) std::printf(" %14s", ("MiB/s " + name(w)).c_str());
  std::printf("   median ratio to %s (min-max)\n", name(windows[0]).c_str());
  for (uint64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    uint64_t t0 = now_ns();
    conn.ping_stream(data.data(), bytes, 1000, 64);  // warm-up, and the time per message
    const int messages = static_cast<int>(std::clamp<double>(0.02 / ((now_ns() - t0) / 1e9 / 1000), 16, 1e6));
    std::vector<std::vector<double>> mibs(windows.size());
    for (int p = 0; p < pairs; ++p)
      for (size_t k = 0; k < windows.size(); ++k) {
        const size_t i = (k + p) % windows.size();
        double best = 0;
        for (int t = 0; t < 3; ++t) {
          t0 = now_ns();
          conn.set_stream_sink(windows[i].sink);
          conn.ping_stream(data.data(), bytes, messages, bench::streaming_window(bytes, windows[i].window));
          best = std::max(best, double(bytes) * messages / ((now_ns() - t0) / 1e9) / (1 << 20));
        }
        mibs[i].push_back(best);
      }
    std::printf("%10llu", static_cast<unsigned long long>(bytes));
    for (const auto& m : mibs) std::printf(" %14.0f", bench::summarize(m).median);
    for (size_t i = 1; i < windows.size(); ++i) {
      std::vector<double> r;
      for (int p = 0; p < pairs; ++p) r.push_back(mibs[i][p] / mibs[0][p]);
      std::printf("   %.3f (%.2f-%.2f)", bench::summarize(r).median, *std::min_element(r.begin(), r.end()), *std::max_element(r.begin(), r.end()));
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "window_alternation: %s\n", e.what());
  return 1;
}
