#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/opencl/opencl_backend.hpp"
#include "common/log.hpp"
#include "server/server.hpp"
#include "tools/outboard/commands.hpp"
#include "tools/outboard/serve_restarts.hpp"

namespace outboard::tool {
namespace {

std::atomic<server::Server*> running{nullptr};
std::atomic<bool> gpus_lost{false};
std::string transport_lost;  // why the transport stopped receiving (set on the progress thread)
// The server the supervisor's sibling announcements go to (a worker's), while it lives.
std::mutex following_mu;
server::Server* following = nullptr;

void on_signal(int) {
  if (server::Server* s = running.load()) s->stop();
}

void on_hangup(int) {
  if (server::Server* s = running.load()) s->reload();  // rereads the identities
}

// A GPU faulted and cannot be rebuilt in this process (backends/cuda/gpu_health.hpp). Under the
// supervisor the server ends, to start again in a new process (serve_restarts.hpp); otherwise its
// calls stay on the GPUs still in service and the CPU backend until it is started again.
void on_gpu_lost(const std::string& why) {
  if (!is_supervised_child()) {
    spdlog::error("serve.gpu_lost error=\"{}\" (served elsewhere until the server is started again)", why);
    return;
  }
  if (gpus_lost.exchange(true)) return;
  spdlog::error("serve.gpu_lost error=\"{}\" (the server ends and starts again in a new process)", why);
  report_lost(why);
  if (server::Server* s = running.load()) s->stop();
}

// Every way out of a running server: its last log line, the log flushed, the process ended with
// nothing torn down (the callers say why).
[[noreturn]] void end_process(const char* last_line, int status) {
  spdlog::info("{}", last_line);
  spdlog::shutdown();
  std::_Exit(status);
}

// A server lives for months and serves payloads of every size from many threads. glibc raises its
// mmap threshold each time a large block is freed (up to 32 MiB), after which blocks of that size
// come from its per-thread arenas and stay there, scattered, once freed: the one-hour soak (64
// clients) measured 546 MB taken from the system for 287 MB in use, still rising. A fixed
// threshold keeps large blocks in mmap and gives them back on free. MALLOC_MMAP_THRESHOLD_ wins.
void keep_large_blocks_out_of_the_heap() {
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

// The GPUs a server started here would see, as CUDA_VISIBLE_DEVICES entries: counted in a child
// process, so that this one (the supervisor) never initialises CUDA.
std::vector<std::string> visible_gpus() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {};
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    std::string why;
    const int n = backends::cuda_device_count(why);
    const ssize_t w = write(fds[1], &n, sizeof n);
    _exit(w == sizeof n ? 0 : 1);
  }
  close(fds[1]);
  int count = 0;
  if (read(fds[0], &count, sizeof count) != sizeof count) count = 0;
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  std::vector<std::string> names;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::stringstream list(v);
    for (std::string item; std::getline(list, item, ',');) names.push_back(item);
  }
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.push_back(i < int(names.size()) ? names[i] : std::to_string(i));
  return out;
}

// What the supervisor starts: a worker per GPU where asked for and there are two or more GPUs
// (or OUTBOARD_TEST_WORKERS), else one child owning them all.
Supervision plan_children(const server::Config& c) {
  Supervision plan;
  plan.port = c.port;
  if (const unsigned n = workers_for_test()) {
    plan.workers = n;
    return plan;
  }
  if (!c.worker_per_gpu) return plan;
  std::vector<std::string> gpus = visible_gpus();
  if (c.gpus && gpus.size() > c.gpus) gpus.resize(c.gpus);
  if (gpus.size() >= 2) {
    plan.workers = static_cast<unsigned>(gpus.size());
    plan.devices = gpus;
  }
  return plan;
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
    if (should_supervise(c.restart_after_gpu_fault)) return supervise(plan_children(c));
    const Restart restart = restart_state();
    if (restart.port) c.port = restart.port;  // where the clients reconnect (worker i: port + i)
    const bool worker = restart.workers > 1;
    log::setup(c.log_level, c.log_format, worker ? int(restart.worker) : -1);
    if (worker) {
      // Its one GPU is the one CUDA_VISIBLE_DEVICES names; the staging reserve is shared out.
      c.gpus = 0;
      if (c.metrics_port) c.metrics_port = static_cast<uint16_t>(c.metrics_port + restart.worker);
      if (c.lane_port) {  // each worker's lane threads after the previous worker's
        const uint32_t first = c.lane_port + restart.worker * c.lane_threads;
        if (first + c.lane_threads > 65536)
          throw Error("setting 'lane_port' leaves worker " + std::to_string(restart.worker) + " no room for its lane ports");
        c.lane_port = static_cast<uint16_t>(first);
      }
      spdlog::info("serve.worker index={} of={} gpu={}", restart.worker, restart.workers,
                   restart.gpu.empty() ? "none" : restart.gpu);
    }
    if (restart.count) spdlog::warn("serve.restarted count={} reason=\"{}\"", restart.count, restart.reason);
    std::vector<std::unique_ptr<server::Backend>> backends;
    backends.push_back(backends::make_cpu_backend({c.fft_threads, c.fft_planner, c.fft_wisdom_file, c.fft_max_plans}));
    backends::CudaOptions gpu_options{c.gpu_memory_bytes, c.fft_gpu_memory_bytes, c.fft_batch_slices, 0, on_gpu_lost};
    const uint64_t ram = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
    gpu_options.pinned_reserve_bytes = c.pinned_reserve_bytes >= 0
                                           ? uint64_t(c.pinned_reserve_bytes)
                                           : std::min<uint64_t>(16ull << 30, ram / 8 / restart.workers);
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
      // A worker per GPU: the CPU platforms once, in the first.
      if (auto cl = backends::make_opencl_backend(why, !restart.gpu.empty() && restart.worker > 0)) {
        spdlog::info("serve.backend name=opencl {}", cl->describe().dump());
        backends.push_back(std::move(cl));
      } else {
        spdlog::info("serve.backend name=opencl unavailable=\"{}\"", why);
      }
    }
    server::Server srv(c, std::move(backends));
    if (restart.count) srv.restarted(restart.count, restart.reason);
    srv.on_transport_lost([](const std::string& why) { transport_lost = why; });
    if (worker) srv.set_worker(restart.worker, restart.workers);
    uint16_t bound = srv.start();
    if (worker) {
      std::lock_guard lk(following_mu);
      following = &srv;
      follow_siblings([](std::vector<uint16_t> ports) {
        std::lock_guard lk(following_mu);  // the server may be going
        if (following) following->set_siblings(std::move(ports));
      });
    }
    if (!a->port_file.empty() && restart.worker == 0) {  // the first worker's port is the server's
      std::string tmp = a->port_file + ".tmp";
      std::ofstream(tmp) << bound << "\n";
      std::rename(tmp.c_str(), a->port_file.c_str());  // readers never see a half-written file
    }
    report_port(bound);
    running = &srv;
    if (gpus_lost) srv.stop();  // lost while starting
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
    {
      std::lock_guard lk(following_mu);
      following = nullptr;
    }
    if (!transport_lost.empty()) {
      // Nothing is torn down (UCX could not close its endpoints through a stalled queue): a new
      // process takes over, under the supervisor, or in this one's place (same pid, same port).
      if (is_supervised_child()) {
        report_lost(transport_lost);
        end_process("serve.stopped (to start again: transport stalled)", kExitStartAgain);
      }
      spdlog::info("serve.stopped (starting again in place: transport stalled)");
      spdlog::shutdown();
      start_again_in_place(bound, transport_lost);
      std::fprintf(stderr, "outboard: error: could not start again: %s\n", std::strerror(errno));
      std::_Exit(kExitStartAgain);
    }
    if (gpus_lost) {
      // What was made on the poisoned GPUs is not torn down: the process ends now, and the
      // supervisor starts a new one.
      end_process("serve.stopped (to start again: GPUs lost)", kExitStartAgain);
    }
    // The process ends here, with nothing torn down, as on the ways out above: UCX 1.13 cannot
    // destroy a listener while a connection its socket took is still sending its request (the
    // request then reaches the destroyed listener: a crash, in the progress loop or UCX's own
    // thread; the churn soak's second server, stopped while clients were connecting, crashed so
    // once in 59 stops, and a server stopped under a storm of connecting clients 2 times in 85).
    // What a stop must do is done: calls finished or dropped with their sessions, the log flushed.
    end_process("serve.stopped", 0);
  };
}

}  // namespace outboard::tool
