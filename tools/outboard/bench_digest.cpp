// outboard bench digest: how fast the client digests an input (resident inputs, issue 36 item 5:
// each call's large inputs are digested to prove them unchanged, which must cost far less than
// sending them would), by size and threads, beside a plain memcpy on one core.
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/clock.hpp"
#include "common/digest.hpp"
#include "tools/outboard/bench_common.hpp"
#include "transport/buffer.hpp"

namespace outboard::tool {
namespace {

int run_digest(const std::vector<uint64_t>& sizes, const std::vector<unsigned>& threads) {
  std::printf("GB/s (1e9 bytes/s); link rates for scale: 25 Gbit/s = 3.1 GB/s, 100 Gbit/s = 12.5 GB/s\n%12s", "bytes");
  for (unsigned t : threads) std::printf(" %9u thr", t);
  std::printf(" %10s\n", "memcpy");
  for (uint64_t bytes : sizes) {
    transport::Buffer in = transport::Buffer::allocate(bytes), out = transport::Buffer::allocate(bytes);
    for (uint64_t i = 0; i < bytes; ++i) in.data()[i] = std::byte(i * 131);
    std::memset(out.data(), 0, bytes);
    std::printf("%12llu", (unsigned long long)bytes);
    for (unsigned t : threads) {
      volatile uint64_t sink = 0;
      std::printf(" %13.2f", best_gbytes(bytes, [&] { sink = sink + content_digest(in.data(), bytes, t)[0]; }));
    }
    std::printf(" %10.2f\n", best_gbytes(bytes, [&] { std::memcpy(out.data(), in.data(), bytes); }));
  }
  return 0;
}

}  // namespace

void add_bench_digest_mode(CLI::App* bench, BenchModes& modes) {
  auto sizes = std::make_shared<std::vector<uint64_t>>(std::vector<uint64_t>{1 << 20, 64 << 20, 512 << 20});
  auto threads = std::make_shared<std::vector<unsigned>>(std::vector<unsigned>{1, 4});
  auto* cmd = bench->add_subcommand("digest", "How fast inputs are digested (resident inputs) by size and threads, beside memcpy");
  cmd->add_option("--sizes", *sizes, "Input sizes in bytes")->capture_default_str();
  cmd->add_option("--threads", *threads, "Thread counts (OUTBOARD_COPY_THREADS)")->check(CLI::Range(1u, 64u))->capture_default_str();
  modes.emplace_back(cmd, [=] { return run_digest(*sizes, *threads); });
}

}  // namespace outboard::tool
