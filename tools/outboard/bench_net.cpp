// Benchmarks of the client-server path: rtt, put (beside ucx_perftest), and the NetPIPE sweeps
// net (client <-> server memory) and remote (client memory <-> the server's GPU memory).
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "bench/net_bench.hpp"
#include "bench/perftest.hpp"
#include "bench/results.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "tools/outboard/bench_common.hpp"
#include "tools/outboard/connect.hpp"
#include "transport/buffer.hpp"

namespace outboard::tool {
namespace {

std::unique_ptr<client::Connection> connect_for(const BenchFlags& f, const char* name) {
  return connect_from_flags(f.server, f.token, name);
}

// --cpus SERVER,CLIENT: this client (and every thread it starts) on CLIENT from here on.
std::optional<bench::Placement> place(const std::vector<int>& cpus) {
  if (cpus.empty()) return std::nullopt;
  bench::Placement p = bench::parse_placement(cpus);
  bench::pin_process(p.client_cpu);
  return p;
}

void record_placement(nlohmann::json& options, const std::optional<bench::Placement>& p) {
  if (p) options["cpus"] = {{"server", p->server_cpu}, {"client", p->client_cpu}};
}

void add_placement_flag(CLI::App* cmd, std::vector<int>& cpus) {
  cmd->add_option("--cpus", cpus,
                  "SERVER,CLIENT: pin this client to CPU CLIENT and run ucx_perftest's server on SERVER and its "
                  "client on CLIENT; start the Outboard server on SERVER (taskset -c SERVER outboard serve ...) so "
                  "that both are measured with the same placement (default: the scheduler places them)")
      ->delimiter(',')
      ->expected(2);
}

int run_rtt(const BenchFlags& f, int iterations) {
  auto conn = connect_for(f, "outboard-bench-rtt");
  auto samples = bench::round_trips_us(*conn, iterations, std::max(100, iterations / 10));
  auto s = bench::summarize(samples);
  std::printf("round trip of a minimal request to %s; transport lanes:\n%s", conn->server_name().c_str(),
              conn->transport_description().c_str());
  std::printf("iterations %d  median %.2f us  p99 %.2f us  min %.2f us  mean %.2f us\n", iterations, s.median, s.p99,
              s.min, s.mean);
  auto doc = bench::new_document("rtt", command_line());
  doc["results"] = {{"iterations", iterations}, {"median_us", s.median}, {"p99_us", s.p99}, {"min_us", s.min},
                    {"mean_us", s.mean}};
  finish(doc, f);
  return 0;
}

int run_put(const BenchFlags& f, const std::vector<uint64_t>& sizes, int window, uint64_t bytes_per_point,
            bool perftest, const std::vector<int>& cpus, const std::string& direction) {
  const auto placement = place(cpus);
  auto conn = connect_for(f, "outboard-bench-put");
  auto doc = bench::new_document("put", command_line());
  record_placement(doc["options"], placement);
  doc["direction"] = direction;
  nlohmann::json points = nlohmann::json::array();
  if (direction != "put") {  // get, or both at once: no ucx_perftest yardstick for these
    std::printf("%12s %10s %8s %14s %14s\n", "bytes", "messages", "lanes", direction == "get" ? "" : "put MiB/s",
                "get MiB/s");
    for (uint64_t bytes : sizes) {
      if (bytes == 0) throw Error("--sizes must be positive");
      const int messages = static_cast<int>(std::clamp<uint64_t>(bytes_per_point / bytes, 8, 100000));
      nlohmann::json point = {{"bytes", bytes}, {"messages", messages}};
      double put_rate = 0, get_rate = 0;
      if (direction == "get") {
        const auto g = bench::get_throughput(*conn, bytes, messages, window, 3);
        get_rate = g.mib_per_s, point["window"] = g.window;
      } else {
        const auto [p, g] = bench::both_throughput(*conn, bytes, messages, window, 3);
        put_rate = p.mib_per_s, get_rate = g.mib_per_s, point["window"] = p.window;
        point["put_mib_per_s"] = put_rate;
      }
      point["get_mib_per_s"] = get_rate;
      point["lanes"] = conn->link_lanes_in_use();
      char put_cell[32] = "";
      if (direction != "get") std::snprintf(put_cell, sizeof put_cell, "%.1f", put_rate);
      std::printf("%12llu %10d %8u %14s %14.1f\n", (unsigned long long)bytes, messages, conn->link_lanes_in_use(),
                  put_cell, get_rate);
      points.push_back(point);
    }
    doc["window"] = window;
    doc["points"] = points;
    finish(doc, f);
    return 0;
  }
  std::printf("%12s %10s %14s %16s %7s %16s %7s\n", "bytes", "messages", "outboard MiB/s", "perftest -e MiB/s",
              "ratio", "perftest MiB/s", "ratio");
  uint16_t perftest_port = 13370;
  for (uint64_t bytes : sizes) {
    if (bytes == 0) throw Error("--sizes must be positive");
    int messages = static_cast<int>(std::clamp<uint64_t>(bytes_per_point / bytes, 8, 100000));
    auto p = bench::put_throughput(*conn, bytes, messages, window, 3);
    nlohmann::json point = {{"bytes", bytes}, {"messages", messages}, {"window", p.window},
                            {"outboard_mib_per_s", p.mib_per_s}, {"lanes", conn->link_lanes_in_use()}};
    std::string cells;
    // The yardstick twice: with error handling (the transports Outboard may use) and without.
    for (bool peer_failure : {true, false}) {
      std::string key = peer_failure ? "ucx_perftest_peer_failure" : "ucx_perftest";
      char cell[64] = "               -       -";
      if (perftest) {
        std::string err;
        if (auto r = bench::run_ucx_perftest(bytes, messages, perftest_port++, peer_failure, placement, err)) {
          point[key] = {{"mib_per_s", r->mib_per_s}, {"ratio", p.mib_per_s / r->mib_per_s}, {"command", r->command}};
          std::snprintf(cell, sizeof cell, " %16.1f %7.3f", r->mib_per_s, p.mib_per_s / r->mib_per_s);
        } else {
          std::fprintf(stderr, "outboard: ucx_perftest: %s\n", err.c_str());
        }
      }
      cells += cell;
    }
    std::printf("%12llu %10d %14.1f%s\n", (unsigned long long)bytes, messages, p.mib_per_s, cells.c_str());
    points.push_back(point);
  }
  doc["window"] = window;
  doc["points"] = points;
  finish(doc, f);
  return 0;
}

// Streams `repeats` messages of `bytes` from `data`; returns the seconds per message. At most ~512
// MiB in flight: a server holds every message in flight to its GPU in memory.
double stream_seconds_per_message(client::Connection& conn, const void* data, uint64_t bytes, uint64_t repeats,
                                  int window, uint8_t flags) {
  const int w = bench::streaming_window(bytes, window);
  uint64_t t0 = now_ns();
  conn.ping_stream(data, bytes, static_cast<int>(repeats), w, flags);
  return (now_ns() - t0) / 1e9 / double(repeats);
}

// One NetPIPE sweep per pattern over a connection; `flags` adds via_gpu for the remote mode.
nlohmann::json sweep_series(client::Connection& conn, const BenchFlags& f, uint8_t flags, const std::string& label,
                            bool streaming, int window) {
  transport::Buffer out = transport::Buffer::allocate(f.sweep.max_bytes);
  transport::Buffer back = transport::Buffer::allocate(f.sweep.max_bytes);
  std::memset(out.data(), 0x5a, f.sweep.max_bytes);  // touch every page before timing
  std::memset(back.data(), 0, f.sweep.max_bytes);
  const std::string name = label + (streaming ? " streaming" : " pingpong");
  auto measure = [&](uint64_t bytes, uint64_t repeats) {
    if (streaming) return stream_seconds_per_message(conn, out.data(), bytes, repeats, window, flags);
    uint64_t t0 = now_ns();
    {
      for (uint64_t r = 0; r < repeats; ++r) {
        auto reply = conn.request(wire::Ping{0, bytes, static_cast<uint8_t>(flags | wire::Ping::echo)},
                                  {{out.data(), bytes}}, back.data(), bytes, 0);
        if (auto* r = std::get_if<wire::CallReply>(&reply)) throw Error("server: " + r->message);
        if (!std::holds_alternative<wire::Pong>(reply)) throw Error("unexpected answer to a ping");
      }
    }
    return (now_ns() - t0) / 1e9 / double(repeats) / 2;  // ping-pong: one way is half the round trip
  };
  auto points = bench::run_sweep(f.sweep, measure, [&](const bench::Point& p, size_t i, size_t n) {
    show_progress(name, p, i, n);
  });
  return bench::transfer_series(name, streaming ? "streaming" : "pingpong", points);
}

// net: within 5% of ucx_perftest on the same sizes is the target; measured at octave sizes. This
// shared machine changes speed by tens of percent from one second to the next, so the sweep's
// point (taken seconds or minutes earlier) is not side by side with ucx_perftest: at each size
// Outboard streams again just before and just after ucx_perftest (the sweep point's repeats, best
// of its trials), and the ratio is the mean of the two over ucx_perftest's figure.
nlohmann::json perftest_validation(client::Connection& conn, const BenchFlags& f, int window,
                                   const nlohmann::json& streaming, const std::optional<bench::Placement>& placement) {
  nlohmann::json out = nlohmann::json::array();
  transport::Buffer data = transport::Buffer::allocate(f.sweep.max_bytes);
  std::memset(data.data(), 0x5a, f.sweep.max_bytes);
  uint16_t port = 13570;
  for (const auto& p : streaming["points"]) {
    uint64_t bytes = p["bytes"];
    if (bytes < 4096 || (bytes & (bytes - 1))) continue;  // powers of two from 4 KiB
    const uint64_t repeats = p["repeats"];
    auto ours_now = [&] {
      double best = 0;
      for (int t = 0; t < f.sweep.trials; ++t)
        best = std::max(best, bytes / stream_seconds_per_message(conn, data.data(), bytes, repeats, window, 0) / (1 << 20));
      return best;
    };
    const double before = ours_now();
    int messages = static_cast<int>(std::clamp<uint64_t>((512ull << 20) / bytes, 16, 20000));
    std::string err;
    auto r = bench::run_ucx_perftest(bytes, messages, port++, true, placement, err);
    if (!r) {
      std::fprintf(stderr, "outboard: ucx_perftest: %s\n", err.c_str());
      continue;
    }
    const double after = ours_now();
    const double sweep = p["mib_per_s"], adjacent = (before + after) / 2;
    out.push_back({{"bytes", bytes}, {"outboard_mib_per_s", adjacent}, {"outboard_before_mib_per_s", before},
                   {"outboard_after_mib_per_s", after}, {"outboard_sweep_mib_per_s", sweep},
                   {"ucx_perftest_mib_per_s", r->mib_per_s}, {"ratio", adjacent / r->mib_per_s},
                   {"sweep_ratio", sweep / r->mib_per_s}, {"command", r->command}});
    std::printf("%12llu B: outboard %10.1f MiB/s (before %.1f, after %.1f; sweep %.1f), ucx_perftest -e %10.1f MiB/s, "
                "ratio %.3f (sweep %.3f)\n",
                (unsigned long long)bytes, adjacent, before, after, sweep, r->mib_per_s, adjacent / r->mib_per_s,
                sweep / r->mib_per_s);
  }
  return out;
}

}  // namespace

// Streaming to the server's memory: messages in flight chosen by size (bench::streaming_window) unless
// --window says. 64 (the depth of UCX's shared-memory FIFO, UCX_MM_FIFO_SIZE) was the fixed default
// before; measured side by side, more in flight streamed messages up to 16 KiB faster.
constexpr int kWindowBySize = 0;
constexpr const char* kWindowHelp = "Streaming: messages in flight (0: by message size, ~8 MiB worth, 64-1024)";

void add_bench_net_modes(CLI::App* bench, BenchModes& modes) {
  {
    auto f = std::make_shared<BenchFlags>();
    auto iterations = std::make_shared<int>(20000);
    auto* cmd = bench->add_subcommand("rtt", "Median and p99 round trip of a minimal remote request");
    add_server_flags(cmd, *f);
    add_output_flags(cmd, *f, "outboard-rtt");
    cmd->add_option("--iterations", *iterations, "Timed round trips")->check(CLI::Range(1, 100000000))->capture_default_str();
    modes.emplace_back(cmd, [=] { return run_rtt(*f, *iterations); });
  }
  {
    auto f = std::make_shared<BenchFlags>();
    auto sizes = std::make_shared<std::vector<uint64_t>>(std::vector<uint64_t>{4096, 65536, 1 << 20, 16 << 20, 64 << 20});
    auto window = std::make_shared<int>(kWindowBySize);
    auto per_point = std::make_shared<uint64_t>(1ull << 30);
    auto perftest = std::make_shared<bool>(true);
    auto direction = std::make_shared<std::string>("put");
    auto* cmd = bench->add_subcommand("put", "Client-to-server bulk throughput by message size, beside ucx_perftest");
    add_server_flags(cmd, *f);
    add_output_flags(cmd, *f, "outboard-put");
    cmd->add_option("--sizes", *sizes, "Message sizes in bytes")->capture_default_str();
    cmd->add_option("--window", *window, kWindowHelp)->check(CLI::Range(0, 1024))->capture_default_str();
    cmd->add_option("--bytes-per-point", *per_point, "Bytes moved per trial at each size")->capture_default_str();
    cmd->add_flag("--perftest,!--no-perftest", *perftest, "Run ucx_perftest (ucp_am_bw) on the same sizes beside it");
    auto cpus = std::make_shared<std::vector<int>>();
    add_placement_flag(cmd, *cpus);
    cmd->add_option("--direction", *direction,
                    "put: client to server; get: server to client (answers from its memory); both: the two at once")
        ->check(CLI::IsMember({"put", "get", "both"}))
        ->capture_default_str();
    modes.emplace_back(cmd, [=] { return run_put(*f, *sizes, *window, *per_point, *perftest, *cpus, *direction); });
  }
  for (bool remote : {false, true}) {
    auto f = std::make_shared<BenchFlags>();
    // To the GPU every message is answered and held by the server until copied: a fixed 32.
    auto window = std::make_shared<int>(remote ? 32 : kWindowBySize);
    auto patterns = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"streaming", "pingpong"});
    auto perftest = std::make_shared<bool>(!remote);
    auto* cmd = remote ? bench->add_subcommand("remote", "NetPIPE sweep: client memory -> the server's GPU memory (and back)")
                       : bench->add_subcommand("net", "NetPIPE sweep: client <-> server over the Outboard transport");
    add_server_flags(cmd, *f);
    add_output_flags(cmd, *f, remote ? "outboard-remote" : "outboard-net");
    add_sweep_flags(cmd, *f, 64ull << 20);
    cmd->add_option("--window", *window, remote ? std::string("Streaming: messages in flight") : std::string(kWindowHelp))
        ->check(CLI::Range(remote ? 1 : 0, 1024))
        ->capture_default_str();
    cmd->add_option("--patterns", *patterns, "streaming, pingpong")
        ->check(CLI::IsMember({"streaming", "pingpong"}))->capture_default_str();
    auto cpus = std::make_shared<std::vector<int>>();
    if (!remote) {
      cmd->add_flag("--perftest,!--no-perftest", *perftest, "Compare with ucx_perftest at powers of two from 4 KiB");
      add_placement_flag(cmd, *cpus);
    }
    modes.emplace_back(cmd, [=]() -> int {
      const auto placement = place(*cpus);
      auto conn = connect_for(*f, remote ? "outboard-bench-remote" : "outboard-bench-net");
      auto doc = bench::new_document(remote ? "remote" : "net", command_line());
      doc["options"] = {{"window", *window}, {"trials", f->sweep.trials}, {"target_seconds", f->sweep.target_seconds},
                        {"perturbation", f->sweep.perturbation}};
      record_placement(doc["options"], placement);
      doc["server"] = conn->server_name();
      const uint8_t flags = remote ? wire::Ping::via_gpu : 0;
      for (const auto& pattern : *patterns)
        doc["series"].push_back(sweep_series(*conn, *f, flags, remote ? "client->server GPU" : "client->server",
                                             pattern == "streaming", *window));
      if (*perftest)
        for (const auto& s : doc["series"])
          if (s["pattern"] == "streaming") doc["validation"] = {{"ucx_perftest", perftest_validation(*conn, *f, *window, s, placement)}};
      finish(doc, *f);
      return 0;
    });
  }
}

}  // namespace outboard::tool
