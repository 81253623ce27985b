#include "tools/outboard/bench_common.hpp"
#include "tools/outboard/commands.hpp"

namespace outboard::tool {

Runner add_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench", "Benchmarks: rtt, put, NetPIPE sweeps (net, remote, memcpy), GEMM sweeps (gemm), fft, connect bursts, soak, seal");
  cmd->require_subcommand(1);
  auto modes = std::make_shared<BenchModes>();
  add_bench_net_modes(cmd, *modes);
  add_bench_gemm_mode(cmd, *modes);
  add_bench_device_modes(cmd, *modes);
  add_bench_fft_mode(cmd, *modes);
  add_bench_connect_mode(cmd, *modes);
  add_bench_soak_mode(cmd, *modes);
  add_bench_seal_mode(cmd, *modes);
  add_bench_digest_mode(cmd, *modes);
  return [modes]() -> int {
    for (auto& [sub, run] : *modes)
      if (sub->parsed()) return run();
    return 2;
  };
}

}  // namespace outboard::tool
