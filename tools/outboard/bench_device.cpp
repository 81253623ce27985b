// Benchmarks of a local device: memcpy (host <-> GPU copies, NetPIPE method) and fft.
#include <cstdio>

#include "bench/results.hpp"
#include "common/error.hpp"
#include "tools/outboard/bench_common.hpp"

namespace outboard::tool {

void add_bench_device_modes(CLI::App* bench, BenchModes& modes) {
  {
    auto f = std::make_shared<BenchFlags>();
    auto* cmd = bench->add_subcommand("fft", "1D/2D/3D FFT sweeps, local CPU vs remote (needs FFT offload)");
    add_server_flags(cmd, *f);
    add_output_flags(cmd, *f, "outboard-fft");
    modes.emplace_back(cmd, []() -> int {
      std::fprintf(stderr, "outboard: bench fft is unavailable: FFT offload does not exist yet\n");
      return kUnavailable;
    });
  }
}

}  // namespace outboard::tool
