#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/net_bench.hpp"
#include "bench/perftest.hpp"
#include "common/error.hpp"
#include "tools/outboard/commands.hpp"
#include "tools/outboard/connect.hpp"

namespace outboard::tool {
namespace {

struct Common {
  std::string server, token, output;
};

void add_common(CLI::App* cmd, Common& c) {
  cmd->add_option("--server", c.server, "host:port (default: OUTBOARD_SERVERS's first, or 127.0.0.1:7700)");
  cmd->add_option("--token-file", c.token, "Secret file");
  cmd->add_option("--output", c.output, "Also write the results as JSON to this file");
}

void write_json(const std::string& path, const nlohmann::json& doc) {
  if (path.empty()) return;
  std::ofstream out(path);
  out << doc.dump(2) << "\n";
  if (!out) throw Error("cannot write " + path);
  std::printf("results written to %s\n", path.c_str());
}

}  // namespace

Runner add_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Benchmarks: round-trip latency (rtt) and bulk throughput (put)");
  cmd->require_subcommand(1);

  auto rtt_args = std::make_shared<Common>();
  auto iterations = std::make_shared<int>(20000);
  auto* rtt = cmd->add_subcommand("rtt", "Median and p99 round trip of a minimal remote request");
  add_common(rtt, *rtt_args);
  rtt->add_option("--iterations", *iterations, "Timed round trips")->check(CLI::Range(1, 100000000))->capture_default_str();

  auto put_args = std::make_shared<Common>();
  auto sizes = std::make_shared<std::vector<uint64_t>>(std::vector<uint64_t>{4096, 65536, 1 << 20, 16 << 20, 64 << 20});
  auto window = std::make_shared<int>(32);
  auto min_bytes = std::make_shared<uint64_t>(1ull << 30);
  auto perftest = std::make_shared<bool>(true);
  auto* put = cmd->add_subcommand("put", "Client-to-server bulk throughput by message size, beside ucx_perftest");
  add_common(put, *put_args);
  put->add_option("--sizes", *sizes, "Message sizes in bytes")->capture_default_str();
  put->add_option("--window", *window, "Messages in flight")->check(CLI::Range(1, 1024))->capture_default_str();
  put->add_option("--bytes-per-point", *min_bytes, "Bytes moved per trial at each size")->capture_default_str();
  put->add_flag("--perftest,!--no-perftest", *perftest, "Run ucx_perftest (ucp_am_bw) on the same sizes beside it");

  return [=]() -> int {
    if (rtt->parsed()) {
      auto conn = connect_from_flags(rtt_args->server, rtt_args->token, "outboard-bench-rtt");
      auto samples = bench::round_trips_us(*conn, *iterations, std::max(100, *iterations / 10));
      auto s = bench::summarize(samples);
      std::printf("round trip of a minimal request to %s; transport lanes:\n%s", conn->server_name().c_str(),
                  conn->transport_description().c_str());
      std::printf("iterations %d  median %.2f us  p99 %.2f us  min %.2f us  mean %.2f us\n", *iterations, s.median,
                  s.p99, s.min, s.mean);
      write_json(rtt_args->output, {{"benchmark", "rtt"},
                                    {"iterations", *iterations},
                                    {"median_us", s.median},
                                    {"p99_us", s.p99},
                                    {"min_us", s.min},
                                    {"mean_us", s.mean}});
      return 0;
    }
    auto conn = connect_from_flags(put_args->server, put_args->token, "outboard-bench-put");
    nlohmann::json points = nlohmann::json::array();
    std::printf("%12s %10s %14s %16s %7s %16s %7s\n", "bytes", "messages", "outboard MiB/s", "perftest -e MiB/s",
                "ratio", "perftest MiB/s", "ratio");
    uint16_t perftest_port = 13370;
    for (uint64_t bytes : *sizes) {
      if (bytes == 0) throw Error("--sizes must be positive");
      int messages = static_cast<int>(std::clamp<uint64_t>(*min_bytes / bytes, 8, 100000));
      auto p = bench::put_throughput(*conn, bytes, messages, *window, 3);
      nlohmann::json point = {{"bytes", bytes}, {"messages", messages}, {"outboard_mib_per_s", p.mib_per_s}};
      std::string cells;
      // The yardstick twice: with error handling (the transports Outboard may use) and without.
      for (bool peer_failure : {true, false}) {
        std::string key = peer_failure ? "ucx_perftest_peer_failure" : "ucx_perftest";
        char cell[64] = "               -       -";
        if (*perftest) {
          std::string err;
          if (auto r = bench::run_ucx_perftest(bytes, messages, perftest_port++, peer_failure, err)) {
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
    write_json(put_args->output, {{"benchmark", "put"}, {"window", *window}, {"points", points}});
    return 0;
  };
}

}  // namespace outboard::tool
