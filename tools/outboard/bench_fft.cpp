// FFT sweeps: GFLOP/s (FFTW's 5 N log2 N convention) of 1-D, 2-D and 3-D c2c and r2c transforms in
// double and single precision, by total size: local FFTW on one thread and on all cores, and
// remote through Outboard (the FFT service: cuFFT on a GPU server). Each point keeps the steady
// state (best of --trials executions of a ready plan) and the first execution, plan included
// (local: FFTW_ESTIMATE planning; remote: the plan announced and at once executed). Remote points
// carry where the time went (to server, plan, to GPU, compute, from GPU, back).
#include <cmath>
#include <cstdio>
#include <random>

#include "backends/cpu/cpu_fft.hpp"
#include "bench/results.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "tools/outboard/bench_common.hpp"
#include "tools/outboard/connect.hpp"
#include "transport/buffer.hpp"

namespace outboard::tool {
namespace {

using wire::FftKind;
using wire::FftPrecision;
using wire::FftShape;

struct FftFlags {
  std::vector<int> ranks{1, 2, 3};
  std::vector<std::string> kinds{"c2c", "r2c"};
  std::vector<std::string> precisions{"d", "s"};
  std::vector<std::string> where{"local-1", "local-all", "remote"};
  int from_log2 = 10, to_log2 = 22;  // total points, powers of two
  bool awkward = true;               // also primes and 3*5*7 products
  int trials = 3;
  uint64_t chunk_bytes = 8 << 20;
  unsigned chunk_window = client::Connection::kDefaultChunkWindow;
};

// Sizes of one rank: 2^k points for k from..to (every other k), split over the dimensions as
// evenly as powers of two allow, then the awkward ones.
std::vector<std::vector<int64_t>> sizes_of(int rank, const FftFlags& f) {
  std::vector<std::vector<int64_t>> out;
  for (int k = f.from_log2; k <= f.to_log2; k += 2) {
    std::vector<int64_t> n(rank);
    for (int d = 0; d < rank; ++d) n[d] = int64_t(1) << (k / rank + (d < k % rank ? 1 : 0));
    out.push_back(n);
  }
  if (!f.awkward) return out;
  switch (rank) {
    case 1: out.insert(out.end(), {{1009}, {15015}, {65537}, {1000003}}); break;
    case 2: out.insert(out.end(), {{101, 101}, {105, 105}, {1009, 1009}}); break;
    default: out.insert(out.end(), {{31, 31, 31}, {105, 105, 105}}); break;
  }
  return out;
}

FftShape make_shape(int kind, char precision, std::vector<int64_t> n) {
  FftShape s;
  s.kind = static_cast<FftKind>(kind);
  s.precision = precision == 's' ? FftPrecision::f32 : FftPrecision::f64;
  s.sign = s.kind == FftKind::c2r ? 1 : -1;
  s.n = std::move(n);
  return s;
}

int64_t total_points(const FftShape& s) {
  int64_t p = 1;
  for (int64_t d : s.n) p *= d;
  return p;
}

void fill(transport::Buffer& b, FftPrecision p, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  if (p == FftPrecision::f32)
    for (size_t i = 0; i < b.size() / 4; ++i) reinterpret_cast<float*>(b.data())[i] = float(u(rng));
  else
    for (size_t i = 0; i < b.size() / 8; ++i) reinterpret_cast<double*>(b.data())[i] = u(rng);
}

// A remote execution of plan `id`, whole or in chunks as the client runtime sends it.
wire::FftReply remote_execute(client::Connection& conn, uint64_t id, const FftShape& s, const transport::Buffer& in,
                              transport::Buffer& out, const FftFlags& f) {
  const uint64_t in_bytes = wire::input_bytes(s), out_bytes = wire::output_bytes(s);
  wire::Message reply;
  if (f.chunk_bytes && in_bytes >= 2 * f.chunk_bytes)
    reply = conn.chunked_request(wire::FftChunk{0, id, s, in_bytes, f.chunk_bytes, 0}, {{in.data(), in_bytes}},
                                 [&out](uint64_t offset, uint64_t) { return out.data() + offset; }, out_bytes, 0,
                                 f.chunk_window);
  else
    reply = conn.request(wire::FftExecute{0, id, s, in_bytes, {}}, {{in.data(), in_bytes}}, out.data(), out_bytes, 0);
  auto* r = std::get_if<wire::FftReply>(&reply);
  if (!r || !r->ok) throw Error("remote FFT failed: " + (r ? r->message : std::string("unexpected reply")));
  return *r;
}

nlohmann::json phases_of(const std::string& name, const wire::FftReply& r, double seconds) {
  const double to_server = (r.receive_ns + r.queue_ns) / 1e9, plan = r.plan_wait_ns / 1e9, to_gpu = r.to_device_ns / 1e9,
               compute = r.compute_ns / 1e9, from_gpu = r.from_device_ns / 1e9;
  return {{"name", name},       {"to_server", to_server}, {"plan", plan}, {"to_gpu", to_gpu}, {"compute", compute},
          {"from_gpu", from_gpu},
          {"from_server", std::max(0.0, seconds - to_server - plan - to_gpu - compute - from_gpu)},
          {"total", seconds}};
}

nlohmann::json fft_series(const std::string& where, int rank, int kind, char precision, const FftFlags& f,
                          client::Connection* conn, uint64_t& next_plan) {
  static const char* kinds[] = {"c2c", "r2c", "c2r", "r2r"};
  const std::string name = std::string(precision == 's' ? "fftwf " : "fftw ") + kinds[kind] + " " +
                           std::to_string(rank) + "-D " + where;
  std::unique_ptr<server::FftExecutor> local;
  if (where != "remote") local = backends::make_cpu_fft({where == "local-1" ? 1u : 0u, "estimate", "", 4});
  std::mt19937 rng(42);
  nlohmann::json points = nlohmann::json::array();
  auto sizes = sizes_of(rank, f);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const FftShape s = make_shape(kind, precision, sizes[i]);
    transport::Buffer in = transport::Buffer::allocate(wire::input_bytes(s)),
                      work = transport::Buffer::allocate(wire::input_bytes(s)),
                      out = transport::Buffer::allocate(wire::output_bytes(s));
    fill(in, s.precision, rng);
    double first = 0, best = INFINITY;
    nlohmann::json best_phases;
    uint64_t id = 0;
    for (int t = 0; t <= f.trials; ++t) {  // trial 0: the first execution, plan included
      const uint64_t t0 = now_ns();
      if (local) {
        std::memcpy(work.data(), in.data(), in.size());  // FFTW may destroy its input
        local->execute(s, work.data(), out.data());
      } else {
        if (t == 0) {
          id = next_plan++;
          conn->notify(wire::FftPlan{id, s});
        }
        wire::FftReply r = remote_execute(*conn, id, s, in, out, f);
        const double sec = (now_ns() - t0) / 1e9;
        if (t > 0 && sec < best) best_phases = phases_of(name + " " + std::to_string(total_points(s)), r, sec);
      }
      const double sec = (now_ns() - t0) / 1e9;
      if (t == 0) first = sec;
      else best = std::min(best, sec);
    }
    if (id) conn->notify(wire::FftRelease{id});
    const double flop = wire::flops(s);
    points.push_back({{"n", total_points(s)}, {"dims", s.n},  {"seconds", best}, {"gflops", flop / best / 1e9},
                      {"first_seconds", first}, {"gflops_first", flop / first / 1e9}});
    if (!best_phases.is_null()) points.back()["phases"] = best_phases;
    std::fprintf(stderr, "\r%-28s [%2zu/%2zu] %-16s %10.2f GFLOP/s (first %8.3f ms)   ", name.c_str(), i + 1,
                 sizes.size(), wire::shape_name(s).substr(12).c_str(), flop / best / 1e9, first * 1e3);
  }
  std::fprintf(stderr, "\n");
  return {{"name", name}, {"kind", "fft"}, {"transform", kinds[kind]}, {"rank", rank},
          {"precision", std::string(1, precision)}, {"where", where}, {"points", points}};
}

}  // namespace

void add_bench_fft_mode(CLI::App* bench, BenchModes& modes) {
  auto f = std::make_shared<BenchFlags>();
  auto g = std::make_shared<FftFlags>();
  auto* cmd = bench->add_subcommand("fft", "FFT GFLOP/s by size: local FFTW (one thread, all cores) vs remote through Outboard");
  add_server_flags(cmd, *f);
  add_output_flags(cmd, *f, "outboard-fft");
  cmd->add_option("--ranks", g->ranks, "1, 2, 3")->check(CLI::Range(1, 3))->capture_default_str();
  cmd->add_option("--kinds", g->kinds, "c2c, r2c")->check(CLI::IsMember({"c2c", "r2c"}))->capture_default_str();
  cmd->add_option("--precisions", g->precisions, "d, s")->check(CLI::IsMember({"d", "s"}))->capture_default_str();
  cmd->add_option("--where", g->where, "local-1, local-all, remote")
      ->check(CLI::IsMember({"local-1", "local-all", "remote"}))->capture_default_str();
  cmd->add_option("--from-log2", g->from_log2, "Smallest total size, 2^k points")->check(CLI::Range(2, 34))->capture_default_str();
  cmd->add_option("--to-log2", g->to_log2, "Largest total size, 2^k points")->check(CLI::Range(2, 34))->capture_default_str();
  cmd->add_flag("--awkward,!--no-awkward", g->awkward, "Also primes and 3*5*7 products")->capture_default_str();
  cmd->add_option("--trials", g->trials, "Executions of a ready plan per size; the fastest is kept")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--chunk-bytes", g->chunk_bytes, "remote: inputs of at least two chunks travel in chunks; 0 whole")
      ->check(CLI::IsMember({uint64_t(0)}) | CLI::Range(wire::kMinChunkBytes, uint64_t(1) << 40))->capture_default_str();
  cmd->add_option("--chunk-window", g->chunk_window, "remote: chunks in flight at once")->check(CLI::Range(1u, 1024u))->capture_default_str();
  modes.emplace_back(cmd, [=]() -> int {
    if (g->from_log2 > g->to_log2) throw Error("--from-log2 must not exceed --to-log2");
    auto doc = bench::new_document("fft", command_line());
    doc["options"] = {{"ranks", g->ranks}, {"kinds", g->kinds}, {"trials", g->trials}, {"chunk_bytes", g->chunk_bytes},
                      {"from_log2", g->from_log2}, {"to_log2", g->to_log2}, {"awkward", g->awkward}};
    doc["software"]["local_fftw"] = backends::make_cpu_fft({0, "estimate", "", 1})->describe();
    std::unique_ptr<client::Connection> conn;
    uint64_t next_plan = 1;
    for (const auto& where : g->where) {
      if (where == "remote" && !conn) conn = connect_from_flags(f->server, f->token, "outboard-bench-fft");
      for (int rank : g->ranks)
        for (const auto& kind : g->kinds)
          for (const auto& p : g->precisions) {
            doc["series"].push_back(fft_series(where, rank, kind == "c2c" ? 0 : 1, p[0], *g, conn.get(), next_plan));
            if (auto& pts = doc["series"].back()["points"]; !pts.empty() && pts.back().contains("phases"))
              doc["phases"].push_back(pts.back()["phases"]);
          }
    }
    finish(doc, *f);
    return 0;
  });
}

}  // namespace outboard::tool
