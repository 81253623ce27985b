// Shared pieces of the `outboard bench` modes: connection flags, sweep flags, output and plots.
#pragma once
#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/sweep.hpp"
#include "common/clock.hpp"
#include "tools/outboard/commands.hpp"

namespace outboard::tool {

struct BenchFlags {
  std::string server, token;
  std::string output;  // result file prefix
  bool plot = false;
  bench::SweepOptions sweep;
};

// --server, --token-file (modes that talk to a server).
void add_server_flags(CLI::App* cmd, BenchFlags& f);
// --output PREFIX and --plot; `default_prefix` when --output is not given.
void add_output_flags(CLI::App* cmd, BenchFlags& f, const std::string& default_prefix);
// NetPIPE sweep flags: --min-bytes, --max-bytes, --perturbation, --steps-per-octave,
// --target-seconds, --trials.
void add_sweep_flags(CLI::App* cmd, BenchFlags& f, uint64_t default_max_bytes);

// Prints a progress line for a finished sweep point (stderr).
void show_progress(const std::string& series, const bench::Point& p, size_t index, size_t count);

// Writes the documents' files (and plots with --plot); prints what was written.
void finish(const nlohmann::json& doc, const BenchFlags& f);

// The command line as typed, for the result document.
std::string command_line();

// Each file of modes registers its subcommands under `bench` with their runners.
using BenchModes = std::vector<std::pair<CLI::App*, Runner>>;
void add_bench_net_modes(CLI::App* bench, BenchModes& modes);    // rtt, put, net, remote
void add_bench_gemm_mode(CLI::App* bench, BenchModes& modes);    // gemm
void add_bench_device_modes(CLI::App* bench, BenchModes& modes); // memcpy
void add_bench_fft_mode(CLI::App* bench, BenchModes& modes);     // fft
void add_bench_connect_mode(CLI::App* bench, BenchModes& modes); // connect
void add_bench_soak_mode(CLI::App* bench, BenchModes& modes);    // soak
void add_bench_seal_mode(CLI::App* bench, BenchModes& modes);    // seal
void add_bench_digest_mode(CLI::App* bench, BenchModes& modes);  // digest

// Best GB/s of fn over `bytes`, repeated for about a quarter of a second per trial, 3 trials.
template <class Fn>
double best_gbytes(uint64_t bytes, Fn fn) {
  double best = 0;
  for (int t = 0; t < 3; ++t) {
    uint64_t n = 0, t0 = now_ns();
    do fn(), ++n;
    while (now_ns() - t0 < 250'000'000);
    best = std::max(best, double(bytes) * double(n) / double(now_ns() - t0));
  }
  return best;
}

// Exit status of a mode that cannot run here (no GPU, no FFT offload yet): skipped, not failed.
inline constexpr int kUnavailable = 77;  // bench::kExitSkipped

}  // namespace outboard::tool
