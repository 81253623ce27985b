// dcuda's host side (dcuda.h): the GPU, the shared regions, the cooperative launch, the report of
// the ranks' errors. Host C++ on the CUDA runtime; the kernel itself is the program's.
#include <cuda_runtime.h>

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
#include "dcuda/runtime/log_printer.hpp"
#include "dcuda/runtime/proxy.hpp"

using dcuda::detail::DeviceBarrier;
using dcuda::detail::kTimers;
using dcuda::detail::RankDevice;
using dcuda::detail::RankHost;

struct dcuda_host_context_s {
  dcuda_kernel kernel = nullptr;
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
  std::string error;
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
  uint32_t first_rank() const { return world.processes[world.self].first_rank; }
};

namespace {

int cuda_failed(dcuda_host_context ctx, cudaError_t e, const char* what) {
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

void release(dcuda_host_context c) {
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
}

int join(dcuda_host_context c);

int setup(dcuda_host_context c, dcuda_kernel kernel, int threads) {
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
int map_peers(dcuda_host_context c, bool peer_path, dcuda::runtime::PeerPaths& paths) {
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
int join(dcuda_host_context c) {
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
int proxy_error(dcuda_host_context c) {
  if (!c->proxy || !c->proxy->failed()) return DCUDA_SUCCESS;
  c->error = "dcuda: the host proxy failed: " + c->proxy->error();
  return DCUDA_ERROR_REMOTE;
}

// The first error any rank recorded, as text; DCUDA_SUCCESS when none did.
int rank_errors(dcuda_host_context c) {
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

}  // namespace

extern "C" int dcuda_host_init(int* argc, char*** argv, dcuda_host_context* ctx, dcuda_kernel kernel,
                               int threads_per_rank) {
  (void)argc, (void)argv;
  if (!ctx) return DCUDA_ERROR_ARGUMENT;
  auto* c = new dcuda_host_context_s;
  if (int rc = setup(c, kernel, threads_per_rank); rc != DCUDA_SUCCESS) {
    std::fprintf(stderr, "%s\n", c->error.c_str());
    release(c);
    delete c;
    *ctx = nullptr;
    return rc;
  }
  *ctx = c;
  return DCUDA_SUCCESS;
}

extern "C" int dcuda_host_get_rank_info(dcuda_host_context ctx, int* world_size, int* first_rank, int* ranks_here,
                                        int* process, int* processes) {
  if (!ctx) return DCUDA_ERROR_ARGUMENT;
  if (world_size) *world_size = static_cast<int>(ctx->world.world_size());
  if (first_rank) *first_rank = static_cast<int>(ctx->first_rank());
  if (ranks_here) *ranks_here = static_cast<int>(ctx->ranks);
  if (process) *process = static_cast<int>(ctx->world.self);
  if (processes) *processes = static_cast<int>(ctx->world.processes.size());
  return DCUDA_SUCCESS;
}

extern "C" double dcuda_host_run(dcuda_host_context ctx, const void* data, size_t size) {
  if (!ctx || (size && !data)) return DCUDA_ERROR_ARGUMENT;
  dcuda_host_context c = ctx;
  if (int rc = proxy_error(c); rc != DCUDA_SUCCESS) return rc;
  if (size > c->data_bytes) {
    cudaFree(c->data);
    c->data = nullptr, c->data_bytes = 0;
    CUDA_OR_FAIL(c, cudaMalloc(&c->data, size));
    c->data_bytes = size;
  }
  if (size) CUDA_OR_FAIL(c, cudaMemcpy(c->data, data, size, cudaMemcpyHostToDevice));
  CUDA_OR_FAIL(c, cudaMemset(c->timings, 0, sizeof(uint64_t) * kTimers * c->ranks));
  dcuda_params p{};
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
  void* args[] = {&p};
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
    e = cudaStreamSynchronize(c->stream);
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
  c->error.clear();
  return ms;
}

extern "C" int dcuda_host_get_timings(dcuda_host_context ctx, uint64_t* out, size_t count) {
  if (!ctx || !out || count < static_cast<size_t>(ctx->ranks) * kTimers) return DCUDA_ERROR_ARGUMENT;
  CUDA_OR_FAIL(ctx, cudaMemcpy(out, ctx->timings, sizeof(uint64_t) * kTimers * ctx->ranks, cudaMemcpyDeviceToHost));
  return DCUDA_SUCCESS;
}

extern "C" const char* dcuda_host_error(dcuda_host_context ctx) { return ctx ? ctx->error.c_str() : "no context"; }

// With other processes: the proxy drains what is in flight and waits until every process has
// finished too (DCUDA_PROXY_STOP_TIMEOUT), so no peer loses a put still on its way.
extern "C" int dcuda_host_finish(dcuda_host_context ctx) {
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
