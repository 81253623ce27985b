// GEMM sweeps: GFLOP/s of S/D/C/Z GEMM on the local CPU BLAS, on a local GPU, and on a remote
// server through Outboard, with and without the time spent moving the matrices.
#include <cmath>
#include <cstdio>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "bench/memcpy_bench.hpp"
#include "bench/results.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "tools/outboard/bench_common.hpp"
#include "tools/outboard/connect.hpp"
#include "transport/buffer.hpp"

namespace outboard::tool {
namespace {

struct GemmFlags {
  std::vector<std::string> precisions{"d"};
  std::vector<std::string> where{"local-cpu", "remote"};
  int64_t from = 64, to = 1024, step = 8;
  bool log_sweep = false;
  int trials = 3;
  uint64_t chunk_bytes = 8 << 20;  // as the client runtime's default (OUTBOARD_CHUNK_BYTES)
  unsigned chunk_window = client::Connection::kDefaultChunkWindow;
};

std::vector<int64_t> gemm_sizes(const GemmFlags& g) {
  std::vector<int64_t> n;
  if (g.log_sweep) {  // coarse: sqrt(2) steps, rounded to multiples of 8
    for (double x = static_cast<double>(g.from); x <= g.to * 1.0001; x *= std::sqrt(2.0))
      n.push_back(std::max<int64_t>(8, static_cast<int64_t>(std::llround(x / 8)) * 8));
    n.erase(std::unique(n.begin(), n.end()), n.end());
  } else {
    for (int64_t x = g.from; x <= g.to; x += g.step) n.push_back(x);
  }
  return n;
}

wire::Level3Call gemm_call(char precision, int64_t n) {
  wire::Level3Call c;
  c.routine = wire::Routine::gemm;
  c.scalar = precision == 's' ? wire::Scalar::s : precision == 'c' ? wire::Scalar::c : precision == 'z' ? wire::Scalar::z : wire::Scalar::d;
  c.m = c.n = c.k = n;
  c.alpha = {1, 0};
  c.beta = {0, 0};
  c.output_sent = false;
  return c;
}

// Operands filled with values in [-1, 1) of the precision's type.
void fill(transport::Buffer& b, wire::Scalar s, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  const bool single = s == wire::Scalar::s || s == wire::Scalar::c;
  const size_t count = b.size() / (single ? 4 : 8);
  for (size_t i = 0; i < count; ++i) {
    if (single) reinterpret_cast<float*>(b.data())[i] = static_cast<float>(u(rng));
    else reinterpret_cast<double*>(b.data())[i] = u(rng);
  }
}

nlohmann::json gemm_series(const std::string& where, char precision, const std::vector<int64_t>& sizes, int trials,
                           uint64_t chunk_bytes, unsigned chunk_window, client::Connection* conn) {
  std::mt19937 rng(42);
  auto cpu = backends::make_cpu_backend();
  nlohmann::json points = nlohmann::json::array();
  const std::string name = std::string(1, precision) + "gemm " + where;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t n = sizes[i];
    wire::Level3Call c = gemm_call(precision, n);
    const size_t bytes = wire::reply_bytes(c);
    transport::Buffer a = transport::Buffer::allocate(bytes), b = transport::Buffer::allocate(bytes),
                      out = transport::Buffer::allocate(bytes);
    fill(a, c.scalar, rng);
    fill(b, c.scalar, rng);
    double best = INFINITY, best_compute = INFINITY;
    nlohmann::json best_phases;  // remote: where the fastest trial's time went
    for (int t = 0; t < trials; ++t) {
      uint64_t t0 = now_ns(), compute_ns = 0;
      const wire::CallReply* r = nullptr;
      wire::Message reply;
      if (where == "local-cpu") {
        const std::byte* in[] = {a.data(), b.data()};
        cpu->executor<server::Blas3Executor>()->level3(c, in, out.data());
      } else {
        if (chunk_bytes && wire::request_bytes(c) >= 2 * chunk_bytes)  // pipelined, as the client runtime does
          reply = conn->chunked_request(
              wire::CallChunk{0, c, wire::request_bytes(c), chunk_bytes, 0}, {{a.data(), bytes}, {b.data(), bytes}},
              [&out](uint64_t offset, uint64_t) { return out.data() + offset; }, bytes, 0, chunk_window);
        else
          reply = conn->request(wire::Blas3Call{0, c, wire::request_bytes(c), {}}, {{a.data(), bytes}, {b.data(), bytes}},
                                out.data(), bytes, 0);
        r = std::get_if<wire::CallReply>(&reply);
        if (!r || !r->ok) throw Error("remote gemm failed: " + (r ? r->message : std::string("unexpected reply")));
        compute_ns = r->compute_ns;
      }
      double s = (now_ns() - t0) / 1e9;
      if (r && s < best) {
        const double to_server = (r->receive_ns + r->queue_ns) / 1e9, to_gpu = r->to_device_ns / 1e9,
                     compute = r->compute_ns / 1e9, from_gpu = r->from_device_ns / 1e9;
        best_phases = {{"name", name + " n=" + std::to_string(n)},
                       {"to_server", to_server},  // includes waiting for a compute thread
                       {"to_gpu", to_gpu}, {"plan", 0}, {"compute", compute}, {"from_gpu", from_gpu},
                       {"from_server", std::max(0.0, s - to_server - to_gpu - compute - from_gpu)},
                       // Pipelined calls overlap their phases: the call took `total`, less than their sum.
                       {"total", s}};
      }
      best = std::min(best, s);
      best_compute = std::min(best_compute, compute_ns ? compute_ns / 1e9 : s);
    }
    const double flop = wire::flops(c);
    points.push_back({{"n", n}, {"seconds", best}, {"gflops", flop / best / 1e9}, {"compute_seconds", best_compute},
                      {"gflops_compute", flop / best_compute / 1e9}});
    if (!best_phases.is_null()) points.back()["phases"] = best_phases;
    std::fprintf(stderr, "\r%-24s [%3zu/%3zu] n=%6lld %10.2f GFLOP/s (%10.2f computing)   ", name.c_str(), i + 1,
                 sizes.size(), (long long)n, flop / best / 1e9, flop / best_compute / 1e9);
  }
  std::fprintf(stderr, "\n");
  return {{"name", name}, {"kind", "gemm"}, {"precision", std::string(1, precision)}, {"where", where},
          {"points", points}};
}

}  // namespace

void add_bench_gemm_mode(CLI::App* bench, BenchModes& modes) {
  auto f = std::make_shared<BenchFlags>();
  auto g = std::make_shared<GemmFlags>();
  auto* cmd = bench->add_subcommand("gemm", "GEMM GFLOP/s by size: local CPU BLAS, local GPU, remote through Outboard");
  add_server_flags(cmd, *f);
  add_output_flags(cmd, *f, "outboard-gemm");
  cmd->add_option("--precisions", g->precisions, "s, d, c, z")->check(CLI::IsMember({"s", "d", "c", "z"}))->capture_default_str();
  cmd->add_option("--where", g->where, "local-cpu, local-gpu, remote")
      ->check(CLI::IsMember({"local-cpu", "local-gpu", "remote"}))->capture_default_str();
  cmd->add_option("--from", g->from, "Smallest n")->check(CLI::Range(int64_t(1), int64_t(1) << 20))->capture_default_str();
  cmd->add_option("--to", g->to, "Largest n")->check(CLI::Range(int64_t(1), int64_t(1) << 20))->capture_default_str();
  cmd->add_option("--step", g->step, "Step of n (8 shows the multiples-of-64 pattern)")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_flag("--log-sweep", g->log_sweep, "Coarse sweep instead: n grows by sqrt(2) from --from to --to");
  cmd->add_option("--trials", g->trials, "Trials per size; the fastest is kept")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--chunk-bytes", g->chunk_bytes,
                  "remote: calls of at least two chunks travel in chunks of this size and run pipelined; 0 sends them whole")
      ->check(CLI::Range(uint64_t(0), uint64_t(1) << 40) & (CLI::IsMember({uint64_t(0)}) | CLI::Range(wire::kMinChunkBytes, uint64_t(1) << 40)))
      ->capture_default_str();
  cmd->add_option("--chunk-window", g->chunk_window, "remote: chunks of a call in flight at once")
      ->check(CLI::Range(1u, 1024u))->capture_default_str();
  modes.emplace_back(cmd, [=]() -> int {
    if (g->from > g->to) throw Error("--from must not exceed --to");
    auto sizes = gemm_sizes(*g);
    auto doc = bench::new_document("gemm", command_line());
    doc["options"] = {{"sizes", sizes}, {"trials", g->trials}, {"chunk_bytes", g->chunk_bytes}, {"chunk_window", g->chunk_window}};
    doc["software"]["local_cpu_blas"] = backends::make_cpu_backend()->describe();
    std::unique_ptr<client::Connection> conn;
    for (const auto& where : g->where) {
      if (where == "remote" && !conn) conn = connect_from_flags(f->server, f->token, "outboard-bench-gemm");
      for (const auto& p : g->precisions) {
        if (where == "local-gpu") {
          try {
            doc["series"].push_back(bench::run_gpu_gemm_series(p[0], sizes, true, {0, g->trials}));
          } catch (const bench::Unavailable& e) {
            std::fprintf(stderr, "outboard: local-gpu gemm skipped: %s\n", e.what());
          }
          continue;
        }
        doc["series"].push_back(gemm_series(where, p[0], sizes, g->trials, g->chunk_bytes, g->chunk_window, conn.get()));
        // The phase plot shows the largest size of each remote series.
        if (auto& pts = doc["series"].back()["points"]; !pts.empty() && pts.back().contains("phases"))
          doc["phases"].push_back(pts.back()["phases"]);
      }
    }
    finish(doc, *f);
    return 0;
  });
}

}  // namespace outboard::tool
