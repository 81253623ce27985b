// dcuda's host side (dcuda.h): the GPU, the shared regions, the cooperative launch, the report of
// the ranks' errors. Host C++ on the CUDA runtime; the kernel itself is the program's.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <sodium.h>

#include "cuda_link.hpp"
#include "dcuda/dcuda.h"
#include "dcuda/runtime/bootstrap.hpp"
#include "dcuda/runtime/cpu_timers.hpp"
#include "dcuda/runtime/log_printer.hpp"
#include "dcuda/runtime/proxy.hpp"

using dcuda::detail::DeviceBarrier;
using dcuda::detail::kTimers;
using dcuda::detail::RankDevice;
using dcuda::detail::RankHost;

struct dcuda_host_context {
  dcuda_kernel_t kernel = nullptr;
  int threads = 0;
  int device = 0;
  uint32_t ranks = 0;
  cudaStream_t stream = nullptr;
  RankHost* host = nullptr;         // host pointer of the mapped region
  RankHost* host_on_device = nullptr;
  RankDevice* device_state = nullptr;
  DeviceBarrier* barrier = nullptr;
  uint64_t* timings = nullptr;
  void* data = nullptr;             // the last run's copy of the program's data
  size_t data_bytes = 0;
  dcuda_context* params = nullptr;  // device memory: the kernel's one argument points here
  std::string error;
  int status = DCUDA_SUCCESS;       // the last failure's code (dcuda_host_status)
  double last_ms = 0;               // the last run's kernel time
  // The run's processes; with more than one, the proxy that serves this one's remote commands.
  dcuda::runtime::Launch launch;
  dcuda::runtime::World world;
  std::unique_ptr<dcuda::cuda::CudaLink> link;
  std::unique_ptr<dcuda::runtime::Proxy> proxy;
  // The path without the proxies to processes of this host (several processes only).
  dcuda::detail::PeerProcess* peers = nullptr;       // device memory, per process
  uint32_t* rank_process = nullptr;                  // device memory, per world rank
  dcuda::detail::WindowEntry* peer_windows = nullptr;  // page-locked, mapped: [world rank * windows + window]
  dcuda::detail::WindowEntry* peer_windows_on_device = nullptr;
  // The ranks' streaming log (dcuda_log), printed while a kernel runs.
  std::FILE* log_out = nullptr;
  std::unique_ptr<dcuda::runtime::LogPrinter> log;
  std::unique_ptr<dcuda::runtime::CpuTimers> timers;  // rank 0's CPU timer events
  uint32_t first_rank() const { return world.processes[world.self].first_rank; }
};

namespace {

int cuda_failed(dcuda_host_context_handle ctx, cudaError_t e, const char* what) {
  if (ctx) ctx->error = std::string(what) + ": " + cudaGetErrorString(e);
  return DCUDA_ERROR_CUDA;
}
#define CUDA_OR_FAIL(ctx, call) \
  do {                          \
    cudaError_t e_ = (call);    \
    if (e_ != cudaSuccess) return cuda_failed(ctx, e_, #call); \
  } while (0)

// An environment variable as a non-negative integer, or `fallback`.
long env_number(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return (*end || n < 0) ? -1 : n;
}

void release(dcuda_host_context_handle c) {
  c->proxy.reset();  // stops its thread first: it reads the regions below
  cudaFree(c->peers);
  cudaFree(c->rank_process);
  if (c->peer_windows) cudaFreeHost(c->peer_windows);
  c->log.reset();
  if (c->log_out && c->log_out != stderr) std::fclose(c->log_out);
  c->link.reset();
  if (c->stream) cudaStreamDestroy(c->stream);
  if (c->host) cudaFreeHost(c->host);
  cudaFree(c->device_state);
  cudaFree(c->barrier);
  cudaFree(c->timings);
  cudaFree(c->data);
  cudaFree(c->params);
}

int join(dcuda_host_context_handle c);

int setup(dcuda_host_context_handle c, dcuda_kernel_t kernel, int threads) {
  if (!kernel || threads < 1) {
    c->error = "dcuda_host_init: a kernel and threads_per_rank >= 1 are needed";
    return DCUDA_ERROR_ARGUMENT;
  }
  c->kernel = kernel;
  c->threads = threads;
  try {
    c->launch = dcuda::runtime::launch_from_env();
  } catch (const std::exception& e) {
    c->error = std::string("dcuda_host_init: ") + e.what();
    return DCUDA_ERROR_BOOTSTRAP;
  }
  int devices = 0;
  CUDA_OR_FAIL(c, cudaGetDeviceCount(&devices));
  c->device = static_cast<int>(c->launch.local % static_cast<uint32_t>(devices));
  CUDA_OR_FAIL(c, cudaSetDevice(c->device));
  cudaDeviceProp prop{};
  CUDA_OR_FAIL(c, cudaGetDeviceProperties(&prop, c->device));
  if (!prop.cooperativeLaunch) {
    c->error = std::string("dcuda_host_init: ") + prop.name + " cannot launch cooperative kernels";
    return DCUDA_ERROR_LAUNCH;
  }
  // Every rank must be resident at once (ranks wait for each other): the grid is at most what
  // the occupancy calculator allows at this block size.
  int per_sm = 0;
  CUDA_OR_FAIL(c, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(kernel), threads, 0));
  const long resident = static_cast<long>(per_sm) * prop.multiProcessorCount;
  const long asked = env_number("DCUDA_RANKS_PER_GPU", resident);
  if (resident < 1) {  // not even one rank fits: say what the kernel takes and what would help
    cudaFuncAttributes f{};
    CUDA_OR_FAIL(c, cudaFuncGetAttributes(&f, reinterpret_cast<const void*>(kernel)));
    char text[640];
    std::snprintf(text, sizeof text,
                  "dcuda_host_init: not one block of %d threads of this kernel fits on an SM of %s: it takes %d "
                  "registers per thread (%ld of the SM's %d) and %zu bytes of static shared memory (the SM has %zu "
                  "per block); use fewer threads per rank, or bound the kernel's registers "
                  "(__launch_bounds__(%d) on the kernel, or nvcc -maxrregcount)",
                  threads, prop.name, f.numRegs, static_cast<long>(f.numRegs) * threads, prop.regsPerMultiprocessor,
                  f.sharedSizeBytes, prop.sharedMemPerBlockOptin, threads);
    c->error = text;
    return DCUDA_ERROR_LAUNCH;
  }
  if (asked < 1 || asked > resident) {
    char text[512];
    std::snprintf(text, sizeof text,
                  "dcuda_host_init: %ld ranks of %d threads asked (DCUDA_RANKS_PER_GPU), but only %ld blocks of this "
                  "kernel can be resident at once on %s (%d per SM, %d SMs): a grid that is not all resident could "
                  "deadlock",
                  asked, threads, resident, prop.name, per_sm, prop.multiProcessorCount);
    c->error = text;
    return DCUDA_ERROR_LAUNCH;
  }
  c->ranks = static_cast<uint32_t>(asked);
  CUDA_OR_FAIL(c, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  CUDA_OR_FAIL(c, cudaHostAlloc(reinterpret_cast<void**>(&c->host), sizeof(RankHost) * c->ranks,
                                cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(static_cast<void*>(c->host), 0, sizeof(RankHost) * c->ranks);
  CUDA_OR_FAIL(c, cudaHostGetDevicePointer(reinterpret_cast<void**>(&c->host_on_device), c->host, 0));
  CUDA_OR_FAIL(c, cudaMalloc(reinterpret_cast<void**>(&c->device_state), sizeof(RankDevice) * c->ranks));
  CUDA_OR_FAIL(c, cudaMemset(c->device_state, 0, sizeof(RankDevice) * c->ranks));
  CUDA_OR_FAIL(c, cudaMalloc(reinterpret_cast<void**>(&c->barrier), sizeof(DeviceBarrier)));
  CUDA_OR_FAIL(c, cudaMemset(c->barrier, 0, sizeof(DeviceBarrier)));
  CUDA_OR_FAIL(c, cudaMalloc(reinterpret_cast<void**>(&c->timings), sizeof(uint64_t) * kTimers * c->ranks));
  CUDA_OR_FAIL(c, cudaMalloc(reinterpret_cast<void**>(&c->params), sizeof(dcuda_context)));
  c->timers = std::make_unique<dcuda::runtime::CpuTimers>(c->host);
  if (int rc = join(c); rc != DCUDA_SUCCESS) return rc;
  c->log_out = stderr;
  if (const char* path = std::getenv("DCUDA_LOG"); path && *path && !(c->log_out = std::fopen(path, "a"))) {
    c->error = std::string("dcuda_host_init: cannot open DCUDA_LOG=") + path + ": " + std::strerror(errno);
    return DCUDA_ERROR_ARGUMENT;
  }
  c->log = std::make_unique<dcuda::runtime::LogPrinter>(c->host, c->ranks, c->first_rank(), c->log_out);
  return DCUDA_SUCCESS;
}

// An IPC handle as the bootstrap record carries it (hex, as common/secret.cpp writes secrets).
std::string to_hex(const std::array<uint8_t, 64>& bytes) {
  char text[2 * 64 + 1];
  return sodium_bin2hex(text, sizeof text, bytes.data(), bytes.size());
}
std::array<uint8_t, 64> from_hex(const std::string& s) {  // the bootstrap checked: 128 hex digits
  std::array<uint8_t, 64> bytes{};
  sodium_hex2bin(bytes.data(), bytes.size(), s.data(), s.size(), nullptr, nullptr, nullptr);
  return bytes;
}

// Maps the ranks' state of every other process of this host that shared it (a process we cannot
// map is reached through the proxies), and sets up what our ranks read to route: per process how
// to reach it, per world rank its process, and the table of mapped windows the proxy fills.
int map_peers(dcuda_host_context_handle c, bool peer_path, dcuda::runtime::PeerPaths& paths) {
  using namespace dcuda::runtime;
  const World& w = c->world;
  const uint32_t n = static_cast<uint32_t>(w.processes.size()), world_size = w.world_size();
  std::vector<dcuda::detail::PeerProcess> peers(n);
  std::vector<uint32_t> rank_process(world_size);
  paths.same_host.assign(n, false);
  paths.mapped.assign(n, false);
  for (uint32_t p = 0; p < n; ++p) {
    const ProcessInfo& q = w.processes[p];
    peers[p] = {0, q.first_rank, q.ranks};
    for (uint32_t r = 0; r < q.ranks; ++r) rank_process[q.first_rank + r] = p;
    if (p == w.self || !peer_path || q.host != w.processes[w.self].host) continue;
    paths.same_host[p] = true;
    if (q.shared.empty()) continue;
    SharedMemory m;
    m.handle = from_hex(q.shared);
    m.bytes = sizeof(RankDevice) * q.ranks;  // what our ranks may touch: checked against the mapping
    try {
      peers[p].state = reinterpret_cast<uint64_t>(c->link->map_shared(m));
      paths.mapped[p] = true;
    } catch (const std::exception& e) {  // e.g. GPUs without peer access: the proxies carry it
      std::fprintf(stderr, "dcuda: process %u reaches process %u through the proxies: %s\n", w.self, p, e.what());
    }
  }
  const size_t table = static_cast<size_t>(world_size) * dcuda::detail::kMaxWindows * sizeof(dcuda::detail::WindowEntry);
  CUDA_OR_FAIL(c, cudaHostAlloc(reinterpret_cast<void**>(&c->peer_windows), table, cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(static_cast<void*>(c->peer_windows), 0, table);
  CUDA_OR_FAIL(c, cudaHostGetDevicePointer(reinterpret_cast<void**>(&c->peer_windows_on_device), c->peer_windows, 0));
  CUDA_OR_FAIL(c, cudaMalloc(reinterpret_cast<void**>(&c->peers), sizeof(dcuda::detail::PeerProcess) * n));
  CUDA_OR_FAIL(c, cudaMemcpy(c->peers, peers.data(), sizeof(dcuda::detail::PeerProcess) * n, cudaMemcpyHostToDevice));
  CUDA_OR_FAIL(c, cudaMalloc(reinterpret_cast<void**>(&c->rank_process), sizeof(uint32_t) * world_size));
  CUDA_OR_FAIL(c, cudaMemcpy(c->rank_process, rank_process.data(), sizeof(uint32_t) * world_size, cudaMemcpyHostToDevice));
  paths.windows = c->peer_windows;
  return DCUDA_SUCCESS;
}

// Finds the run's other processes and starts the proxy; a run of one process is its own world.
int join(dcuda_host_context_handle c) {
  if (c->launch.processes <= 1) {
    c->world.self = 0;
    c->world.processes = {dcuda::runtime::ProcessInfo{0, c->ranks, "", "", "", ""}};
    return DCUDA_SUCCESS;
  }
  try {
    using namespace dcuda::runtime;
    c->proxy = std::make_unique<Proxy>();
    c->link = std::make_unique<dcuda::cuda::CudaLink>(c->device);
    // Our ranks' state as the other processes of this host can map it (DCUDA_PEER_PATH=0: never).
    const char* peer_env = std::getenv("DCUDA_PEER_PATH");
    const bool peer_path = !(peer_env && std::strcmp(peer_env, "0") == 0);
    SharedMemory state;
    std::string shared;
    if (peer_path && c->link->share(c->device_state, state) && state.base == reinterpret_cast<uint64_t>(c->device_state))
      shared = to_hex(state.handle);
    c->world = bootstrap(c->launch, c->ranks, c->proxy->address(), c->proxy->key(), bootstrap_dir(c->launch),
                         bootstrap_timeout(), shared);
    PeerPaths paths;
    if (int rc = map_peers(c, peer_path, paths); rc != DCUDA_SUCCESS) return rc;
    c->proxy->start(c->world, c->host, c->device_state, *c->link, paths);
  } catch (const std::exception& e) {
    c->error = std::string("dcuda_host_init: ") + e.what();
    return DCUDA_ERROR_BOOTSTRAP;
  }
  return DCUDA_SUCCESS;
}

// The proxy's first error, if it has one.
int proxy_error(dcuda_host_context_handle c) {
  if (!c->proxy || !c->proxy->failed()) return DCUDA_SUCCESS;
  c->error = "dcuda: the host proxy failed: " + c->proxy->error();
  return DCUDA_ERROR_REMOTE;
}

// The first error any rank recorded, as text; DCUDA_SUCCESS when none did.
int rank_errors(dcuda_host_context_handle c) {
  std::vector<RankDevice> state(c->ranks);
  CUDA_OR_FAIL(c, cudaMemcpy(state.data(), c->device_state, sizeof(RankDevice) * c->ranks, cudaMemcpyDeviceToHost));
  for (uint32_t r = 0; r < c->ranks; ++r) {
    if (state[r].error == 0) continue;
    char text[160];
    std::snprintf(text, sizeof text, "dcuda: rank %u failed with %d at dcuda_device.cuh:%u", c->first_rank() + r,
                  state[r].error, state[r].error_line);
    c->error = text;
    return state[r].error;
  }
  return DCUDA_SUCCESS;
}

// A failure of a host call: kept for dcuda_host_status and dcuda_host_error, and printed (the
// reference's host calls return nothing, so a program that checks nothing still hears of it).
int failed(dcuda_host_context_handle c, int code) {
  c->status = code;
  std::fprintf(stderr, "%s\n", c->error.c_str());
  return code;
}

// The kernel's wait: the CPU timers' events are taken as they come (a poll, then the stream).
cudaError_t wait_for_kernel(dcuda_host_context_handle c) {
  for (;;) {
    c->timers->poll();
    const cudaError_t e = cudaStreamQuery(c->stream);
    if (e != cudaErrorNotReady) {
      c->timers->poll();
      return e;
    }
  }
}

// One cooperative launch: the program's data to the device and back, the kernel's parameters,
// the launch and its wait, then what went wrong in it. The kernel's time in c->last_ms.
int run(dcuda_host_context_handle c, void* data, size_t size) {
  if (size > c->data_bytes) {
    cudaFree(c->data);
    c->data = nullptr, c->data_bytes = 0;
    CUDA_OR_FAIL(c, cudaMalloc(&c->data, size));
    c->data_bytes = size;
  }
  if (size) CUDA_OR_FAIL(c, cudaMemcpy(c->data, data, size, cudaMemcpyHostToDevice));
  CUDA_OR_FAIL(c, cudaMemset(c->timings, 0, sizeof(uint64_t) * kTimers * c->ranks));
  dcuda_context params{};
  dcuda::detail::Params& p = params.params;
  p.host = c->host_on_device;
  p.device = c->device_state;
  p.barrier = c->barrier;
  p.world_size = c->world.world_size();
  p.first_rank = c->first_rank();
  p.ranks_here = c->ranks;
  p.processes = static_cast<uint32_t>(c->world.processes.size());
  p.data = size ? c->data : nullptr;
  p.data_bytes = size;
  p.timings = c->timings;
  p.peers = c->peers;
  p.rank_process = c->rank_process;
  p.peer_windows = c->peer_windows_on_device;
  CUDA_OR_FAIL(c, cudaMemcpy(c->params, &params, sizeof params, cudaMemcpyHostToDevice));
  dcuda_context_handle handle = c->params;
  void* args[] = {&handle};
  cudaEvent_t start, stop;
  CUDA_OR_FAIL(c, cudaEventCreate(&start));
  CUDA_OR_FAIL(c, cudaEventCreate(&stop));
  cudaEventRecord(start, c->stream);
  if (c->proxy) c->proxy->set_busy(true);
  c->log->start();
  cudaError_t e = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(c->kernel), dim3(c->ranks), dim3(c->threads),
                                              args, 0, c->stream);
  if (e == cudaSuccess) {
    cudaEventRecord(stop, c->stream);
    e = wait_for_kernel(c);
  }
  if (c->proxy) c->proxy->set_busy(false);
  c->log->stop();
  float ms = 0;
  if (e == cudaSuccess) cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (e != cudaSuccess) return cuda_failed(c, e, "dcuda_host_run: the kernel");
  if (int rc = proxy_error(c); rc != DCUDA_SUCCESS) return rc;  // the ranks' errors are its consequences
  if (int rc = rank_errors(c); rc != DCUDA_SUCCESS) return rc;
  // What the kernel made of the data, back where it came from (the reference's dcuda_host_run).
  if (size) CUDA_OR_FAIL(c, cudaMemcpy(data, c->data, size, cudaMemcpyDeviceToHost));
  c->error.clear();
  c->status = DCUDA_SUCCESS;
  c->last_ms = ms;
  return DCUDA_SUCCESS;
}

}  // namespace

void dcuda_host_init(int argc, char* argv[], dcuda_host_context_handle* ctx, dcuda_kernel_t kernel,
                     int threads_per_rank) {
  (void)argc, (void)argv;
  if (!ctx) {
    std::fprintf(stderr, "dcuda_host_init: no place for the context (ctx is null)\n");
    return;
  }
  auto* c = new dcuda_host_context;
  *ctx = c;
  if (int rc = setup(c, kernel, threads_per_rank); rc != DCUDA_SUCCESS) {
    std::string why = std::move(c->error);
    release(c);  // what was made goes; the context stays, failed, for status and error
    *c = dcuda_host_context{};
    c->error = std::move(why);
    failed(c, rc);
  }
}

void dcuda_host_get_rank_info(dcuda_host_context_handle ctx, dcuda_rank_info* info) {
  if (!info) return;
  *info = dcuda_rank_info{};
  if (!ctx || ctx->status != DCUDA_SUCCESS || ctx->world.processes.empty()) return;
  const dcuda::runtime::World& w = ctx->world;
  info->rank_count = static_cast<int>(w.world_size());
  info->rank_responsible = static_cast<int>(ctx->ranks);
  info->rank_start = static_cast<int>(ctx->first_rank());
  info->process_count = static_cast<int>(w.processes.size());
  info->process_index = static_cast<int>(w.self);
  // Nodes in the order their first process comes; devices: the processes of this node (one GPU each).
  std::vector<std::string> nodes;
  for (uint32_t p = 0; p < w.processes.size(); ++p) {
    const std::string& host = w.processes[p].host;
    if (std::find(nodes.begin(), nodes.end(), host) == nodes.end()) nodes.push_back(host);
    if (host == w.processes[w.self].host) {
      if (p == w.self) info->device_index = info->device_count;
      ++info->device_count;
    }
  }
  info->node_count = static_cast<int>(nodes.size());
  info->node_index = static_cast<int>(std::find(nodes.begin(), nodes.end(), w.processes[w.self].host) - nodes.begin());
}

double dcuda_host_run(dcuda_host_context_handle ctx, void* gpu_data, size_t gpu_size) {
  if (!ctx) {
    std::fprintf(stderr, "dcuda_host_run: no context\n");
    return DCUDA_ERROR_ARGUMENT;
  }
  dcuda_host_context_handle c = ctx;
  if (!c->kernel) return failed(c, c->status != DCUDA_SUCCESS ? c->status : DCUDA_ERROR_ARGUMENT);  // init failed
  if (gpu_size && !gpu_data) {
    c->error = "dcuda_host_run: gpu_size is not 0 but gpu_data is null";
    return failed(c, DCUDA_ERROR_ARGUMENT);
  }
  if (int rc = proxy_error(c); rc != DCUDA_SUCCESS) return failed(c, rc);
  if (int rc = run(c, gpu_data, gpu_size); rc != DCUDA_SUCCESS) return failed(c, rc);
  return c->last_ms;
}

std::vector<double> dcuda_host_get_timings(dcuda_host_context_handle ctx) {
  return ctx && ctx->timers ? ctx->timers->results() : std::vector<double>{};
}

int dcuda_host_get_gpu_timings(dcuda_host_context_handle ctx, uint64_t* out, size_t count) {
  if (!ctx || !ctx->timings || !out || count < static_cast<size_t>(ctx->ranks) * kTimers) return DCUDA_ERROR_ARGUMENT;
  CUDA_OR_FAIL(ctx, cudaMemcpy(out, ctx->timings, sizeof(uint64_t) * kTimers * ctx->ranks, cudaMemcpyDeviceToHost));
  return DCUDA_SUCCESS;
}

int dcuda_host_status(dcuda_host_context_handle ctx) { return ctx ? ctx->status : DCUDA_ERROR_ARGUMENT; }

const char* dcuda_host_error(dcuda_host_context_handle ctx) { return ctx ? ctx->error.c_str() : "no context"; }

// With other processes: the proxy drains what is in flight and waits until every process has
// finished too (DCUDA_PROXY_STOP_TIMEOUT), so no peer loses a put still on its way.
int dcuda_host_finish_status(dcuda_host_context_handle ctx) {
  if (!ctx) return DCUDA_ERROR_ARGUMENT;
  int rc = DCUDA_SUCCESS;
  if (ctx->proxy) {
    ctx->proxy->stop();
    if (ctx->proxy->failed()) {
      std::fprintf(stderr, "dcuda_host_finish: the host proxy failed: %s\n", ctx->proxy->error().c_str());
      rc = DCUDA_ERROR_REMOTE;
    }
  }
  release(ctx);
  delete ctx;
  return rc;
}

void dcuda_host_finish(dcuda_host_context_handle ctx) { (void)dcuda_host_finish_status(ctx); }
