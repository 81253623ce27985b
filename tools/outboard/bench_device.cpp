// Benchmarks of a local device: memcpy (host <-> GPU copies, NetPIPE method).
#include <algorithm>
#include <cstdio>

#include "bench/memcpy_bench.hpp"
#include "bench/results.hpp"
#include "common/error.hpp"
#include "tools/outboard/bench_common.hpp"

namespace outboard::tool {

void add_bench_device_modes(CLI::App* bench, BenchModes& modes) {
  {
    auto f = std::make_shared<BenchFlags>();
    struct Choice {
      std::vector<std::string> directions{"h2d", "d2h", "d2d", "roundtrip"};
      std::vector<std::string> memory{"paged", "pinned"};
      std::vector<std::string> patterns{"streaming", "pingpong"};
      int device = 0;
      bool validate = true;
    };
    auto c = std::make_shared<Choice>();
    auto* cmd = bench->add_subcommand("memcpy", "NetPIPE sweeps of host<->GPU copies on a local GPU (needs CUDA)");
    add_output_flags(cmd, *f, "outboard-memcpy");
    add_sweep_flags(cmd, *f, 1ull << 30);
    cmd->add_option("--directions", c->directions, "h2d, d2h, d2d, roundtrip")
        ->check(CLI::IsMember({"h2d", "d2h", "d2d", "roundtrip"}))->capture_default_str();
    cmd->add_option("--memory", c->memory, "Host memory: paged (malloc), pinned (cudaHostAlloc)")
        ->check(CLI::IsMember({"paged", "pinned"}))->capture_default_str();
    cmd->add_option("--patterns", c->patterns, "streaming (one-way, back to back), pingpong (there and back)")
        ->check(CLI::IsMember({"streaming", "pingpong"}))->capture_default_str();
    cmd->add_option("--device", c->device, "GPU index")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_flag("--validate,!--no-validate", c->validate,
                  "Also time the peak pinned copies with CUDA events and compare (and the PCIe limit)");
    modes.emplace_back(cmd, [=]() -> int {
      auto has = [](const std::vector<std::string>& v, const char* x) { return std::find(v.begin(), v.end(), x) != v.end(); };
      bench::MemcpyOptions o;
      o.h2d = has(c->directions, "h2d");
      o.d2h = has(c->directions, "d2h");
      o.d2d = has(c->directions, "d2d");
      o.roundtrip = has(c->directions, "roundtrip");
      o.paged = has(c->memory, "paged");
      o.pinned = has(c->memory, "pinned");
      o.streaming = has(c->patterns, "streaming");
      o.pingpong = has(c->patterns, "pingpong");
      o.device = c->device;
      o.validate = c->validate;
      auto doc = bench::new_document("memcpy", command_line());
      try {
        doc.merge_patch(bench::run_memcpy_bench(f->sweep, o, show_progress));
      } catch (const bench::Unavailable& e) {
        std::fprintf(stderr, "outboard: bench memcpy is unavailable: %s\n", e.what());
        return kUnavailable;
      }
      if (doc.contains("validation")) std::printf("validation: %s\n", doc["validation"].dump(2).c_str());
      finish(doc, *f);
      return 0;
    });
  }
}

}  // namespace outboard::tool
