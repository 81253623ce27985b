#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/opencl/opencl_backend.hpp"
#include "common/log.hpp"
#include "server/server.hpp"
#include "tools/outboard/commands.hpp"

namespace outboard::tool {
namespace {

server::Server* running = nullptr;

void on_signal(int) {
  if (running) running->stop();
}

void on_hangup(int) {
  if (running) running->reload();  // rereads the identities
}

// A server lives for months and serves payloads of every size from many threads. glibc raises its
// mmap threshold each time a large block is freed (up to 32 MiB), after which blocks of that size
// come from its per-thread arenas and stay there, scattered, once freed: the one-hour soak (64
// clients) measured 546 MB taken from the system for 287 MB in use, still rising. A fixed
// threshold keeps large blocks in mmap and gives them back on free. MALLOC_MMAP_THRESHOLD_ wins.
void keep_large_blocks_out_of_the_heap() {
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

}  // namespace

Runner add_serve(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Run the Outboard daemon");
  struct Args {
    std::string config_file, port_file;
    server::Config overrides;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--config", a->config_file, "TOML configuration file")->check(CLI::ExistingFile);
  auto* host = cmd->add_option("--host", a->overrides.host, "Address to listen on (default 127.0.0.1)");
  auto* port = cmd->add_option("--port", a->overrides.port, "Port to listen on; 0 picks a free one (default 7700)");
  auto* token = cmd->add_option("--token-file", a->overrides.token_file, "Secret file (default: outboard token's path)");
  auto* threads = cmd->add_option("--compute-threads", a->overrides.compute_threads, "Calls executed at once (default 4)")
                      ->check(CLI::Range(1u, 1024u));
  auto* level = cmd->add_option("--log-level", a->overrides.log_level, "trace|debug|info|warn|error (default info)");
  auto* format = cmd->add_option("--log-format", a->overrides.log_format, "text|json (default text)");
  auto* gpus = cmd->add_option("--gpus", a->overrides.gpus, "GPUs to serve with, the first ones; 0: all (default)");
  cmd->add_option("--port-file", a->port_file, "Write the bound port to this file once listening");
  return [=] {
    keep_large_blocks_out_of_the_heap();
    server::Config c;
    if (!a->config_file.empty()) c = server::load_config_file(a->config_file);
    // Flags given on the command line win over the file.
    if (host->count()) c.host = a->overrides.host;
    if (port->count()) c.port = a->overrides.port;
    if (token->count()) c.token_file = a->overrides.token_file;
    if (threads->count()) c.compute_threads = a->overrides.compute_threads;
    if (level->count()) c.log_level = a->overrides.log_level;
    if (format->count()) c.log_format = a->overrides.log_format;
    if (gpus->count()) c.gpus = a->overrides.gpus;
    log::setup(c.log_level, c.log_format);
    std::vector<std::unique_ptr<server::Backend>> backends;
    backends.push_back(backends::make_cpu_backend({c.fft_threads, c.fft_planner, c.fft_wisdom_file, c.fft_max_plans}));
    backends::CudaOptions gpu_options{c.gpu_memory_bytes, c.fft_gpu_memory_bytes, c.fft_batch_slices, 0};
    const uint64_t ram = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
    gpu_options.pinned_reserve_bytes =
        c.pinned_reserve_bytes >= 0 ? uint64_t(c.pinned_reserve_bytes) : std::min<uint64_t>(16ull << 30, ram / 8);
    // One GPU backend per GPU: a big call's blocks spread over all of them.
    for (int device = 0; c.gpus == 0 || device < static_cast<int>(c.gpus); ++device) {
      std::string why;
      auto gpu = backends::make_cuda_backend(why, device, gpu_options);
      if (!gpu) {
        if (device == 0) spdlog::info("serve.backend name=cuda unavailable=\"{}\"", why);
        break;
      }
      spdlog::info("serve.backend name=cuda {}", gpu->describe().dump());
      backends.push_back(std::move(gpu));
    }
    if (c.opencl) {
      std::string why;
      if (auto cl = backends::make_opencl_backend(why)) {
        spdlog::info("serve.backend name=opencl {}", cl->describe().dump());
        backends.push_back(std::move(cl));
      } else {
        spdlog::info("serve.backend name=opencl unavailable=\"{}\"", why);
      }
    }
    server::Server srv(c, std::move(backends));
    uint16_t bound = srv.start();
    if (!a->port_file.empty()) {
      std::string tmp = a->port_file + ".tmp";
      std::ofstream(tmp) << bound << "\n";
      std::rename(tmp.c_str(), a->port_file.c_str());  // readers never see a half-written file
    }
    running = &srv;
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    struct sigaction hup{};
    hup.sa_handler = on_hangup;
    sigaction(SIGHUP, &hup, nullptr);
    signal(SIGPIPE, SIG_IGN);
    srv.run();
    running = nullptr;
    spdlog::info("serve.stopped");
    return 0;
  };
}

}  // namespace outboard::tool
