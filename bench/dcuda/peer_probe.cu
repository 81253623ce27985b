// The raw hardware between two GPUs of one host, for dcuda's peer path (issue 18): what a
// block-to-block put+notify through mapped peer memory costs, and what the copy engines and the
// SMs move between the two. One process, GPUs 0 and 1, peer access enabled both ways. Prints one
// `peer-probe` line per figure and, with a second argument, writes them as JSON.
//   peer_probe [ITERATIONS] [JSON]
// - latency: one block on each GPU plays ping-pong; each put copies BYTES into the other GPU's
//   memory with the block's threads, then thread 0 releases a flag there at system scope; one way
//   = half the round trip, timed on GPU 0 with its nanosecond clock (4 B, 4 KiB, and the flag alone);
// - cudaMemcpyPeerAsync 1 MiB (back to back), 64 MiB and 256 MiB, one direction and both at once;
// - the SMs of GPU 0 storing into GPU 1's memory (what many ranks' puts do at once), 256 MiB.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "system_scope.cuh"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::fprintf(stderr, "peer_probe: %s: %s\n", what, cudaGetErrorString(e)), std::exit(1);
}

// Role 0 (GPU 0) starts. `mine` holds this side's flag (word 0) and window (from byte 256);
// `theirs` is the other GPU's. `bytes` = 0: the flag alone (a notify).
__global__ void pingpong(unsigned* mine, unsigned* theirs, const uint4* source, size_t bytes, int iterations, int role,
                         unsigned long long* ns) {
  uint4* window = reinterpret_cast<uint4*>(reinterpret_cast<char*>(theirs) + 256);
  const size_t vectors = (bytes + sizeof(uint4) - 1) / sizeof(uint4);
  auto put = [&](unsigned i) {
    for (size_t v = threadIdx.x; v < vectors; v += blockDim.x) window[v] = source[v];
    __syncthreads();
    if (threadIdx.x == 0) {
      if (bytes) __threadfence_system();  // the data before the flag that announces it
      store_sys(theirs, i);
    }
  };
  auto wait = [&](unsigned i) {
    if (threadIdx.x == 0)
      while (load_sys(mine) != i) {
      }
    __syncthreads();
  };
  const unsigned long long start = globaltimer_ns();
  for (int i = 1; i <= iterations; ++i) {
    if (role == 0) put(i), wait(i);
    else wait(i), put(i);
  }
  if (threadIdx.x == 0) *ns = globaltimer_ns() - start;
}

__global__ void store_all(uint4* to, const uint4* from, size_t vectors) {
  for (size_t v = blockIdx.x * size_t(blockDim.x) + threadIdx.x; v < vectors; v += size_t(gridDim.x) * blockDim.x)
    to[v] = from[v];
}

struct Figure {
  std::string name;
  double value;
  const char* unit;
};
std::vector<Figure> figures;
void report(const std::string& name, double value, const char* unit) {
  std::printf("peer-probe %s=%.3f %s\n", name.c_str(), value, unit);
  figures.push_back({name, value, unit});
}

double seconds_of(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  return ms / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count < 2) return std::printf("peer-probe skipped: %d GPU(s), two are needed\n", count), 77;
  int access01 = 0, access10 = 0;
  check(cudaDeviceCanAccessPeer(&access01, 0, 1), "cudaDeviceCanAccessPeer");
  check(cudaDeviceCanAccessPeer(&access10, 1, 0), "cudaDeviceCanAccessPeer");
  if (!access01 || !access10) return std::printf("peer-probe: GPUs 0 and 1 cannot access each other's memory\n"), 1;
  const size_t big = size_t(256) << 20;
  unsigned* flags[2];
  uint4* source[2];
  char* buffer[2];
  unsigned long long* ns[2];
  cudaStream_t stream[2];
  cudaEvent_t ev[2][2];
  for (int d = 0; d < 2; ++d) {
    check(cudaSetDevice(d), "cudaSetDevice");
    check(cudaDeviceEnablePeerAccess(1 - d, 0), "cudaDeviceEnablePeerAccess");
    check(cudaMalloc(&flags[d], 1 << 20), "cudaMalloc");
    check(cudaMalloc(&source[d], 1 << 20), "cudaMalloc");
    check(cudaMalloc(&buffer[d], big), "cudaMalloc");
    check(cudaMalloc(&ns[d], sizeof(unsigned long long)), "cudaMalloc");
    check(cudaMemset(source[d], d + 1, 1 << 20), "cudaMemset");
    check(cudaMemset(buffer[d], 0, big), "cudaMemset");
    check(cudaStreamCreateWithFlags(&stream[d], cudaStreamNonBlocking), "cudaStreamCreate");
    for (auto& e : ev[d]) check(cudaEventCreate(&e), "cudaEventCreate");
  }
  // Latency: both kernels run at once, one per GPU.
  const struct {
    const char* name;
    size_t bytes;
  } sizes[] = {{"put_notify_4B_one_way", 4}, {"put_notify_4KiB_one_way", 4096}, {"notify_one_way", 0}};
  for (const auto& s : sizes)
    for (int threads : {32, 256}) {
      for (int d = 0; d < 2; ++d) {
        check(cudaSetDevice(d), "cudaSetDevice");
        check(cudaMemset(flags[d], 0, 256), "cudaMemset");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      }
      for (int d = 0; d < 2; ++d) {
        check(cudaSetDevice(d), "cudaSetDevice");
        pingpong<<<1, threads, 0, stream[d]>>>(flags[d], flags[1 - d], source[d], s.bytes, iterations, d, ns[d]);
        check(cudaGetLastError(), "launch pingpong");
      }
      for (int d = 0; d < 2; ++d) check(cudaStreamSynchronize(stream[d]), "pingpong");
      unsigned long long t = 0;
      check(cudaMemcpy(&t, ns[0], sizeof t, cudaMemcpyDeviceToHost), "cudaMemcpy");
      report(std::string(s.name) + "_" + std::to_string(threads) + "_threads", t / 1e3 / iterations / 2, "us");
    }
  // Copy engines: 1 MiB copies back to back, then single large ones; one direction, then both.
  auto copies = [&](size_t bytes, int times, bool both) {
    for (int rep = 0; rep < 2; ++rep) {  // the first round warms up
      for (int d = 0; d < (both ? 2 : 1); ++d) {
        check(cudaSetDevice(d), "cudaSetDevice");
        check(cudaEventRecord(ev[d][0], stream[d]), "cudaEventRecord");
        for (int i = 0; i < times; ++i)
          check(cudaMemcpyPeerAsync(buffer[1 - d], 1 - d, buffer[d] + (i * bytes) % (big - bytes + 1), d, bytes, stream[d]),
                "cudaMemcpyPeerAsync");
        check(cudaEventRecord(ev[d][1], stream[d]), "cudaEventRecord");
      }
      for (int d = 0; d < (both ? 2 : 1); ++d) check(cudaEventSynchronize(ev[d][1]), "cudaEventSynchronize");
    }
    double gbs = 0;
    for (int d = 0; d < (both ? 2 : 1); ++d) gbs += double(bytes) * times / seconds_of(ev[d][0], ev[d][1]) / 1e9;
    return gbs;
  };
  for (bool both : {false, true}) {
    const char* dir = both ? "both_directions" : "one_direction";
    report(std::string("cudaMemcpyPeer_1MiB_x256_") + dir, copies(size_t(1) << 20, 256, both), "GB/s");
    report(std::string("cudaMemcpyPeer_64MiB_x8_") + dir, copies(size_t(64) << 20, 8, both), "GB/s");
    report(std::string("cudaMemcpyPeer_256MiB_x4_") + dir, copies(big, 4, both), "GB/s");
  }
  // The SMs of GPU 0 storing into GPU 1's memory.
  {
    check(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    for (int rep = 0; rep < 2; ++rep) {
      check(cudaEventRecord(ev[0][0], stream[0]), "cudaEventRecord");
      for (int i = 0; i < 4; ++i)
        store_all<<<prop.multiProcessorCount * 4, 512, 0, stream[0]>>>(reinterpret_cast<uint4*>(buffer[1]),
                                                                       reinterpret_cast<const uint4*>(buffer[0]),
                                                                       big / sizeof(uint4));
      check(cudaEventRecord(ev[0][1], stream[0]), "cudaEventRecord");
      check(cudaEventSynchronize(ev[0][1]), "store_all");
    }
    report("sm_stores_256MiB_x4_one_direction", 4.0 * big / seconds_of(ev[0][0], ev[0][1]) / 1e9, "GB/s");
  }
  if (argc > 2) {
    FILE* f = std::fopen(argv[2], "w");
    if (!f) return std::perror(argv[2]), 1;
    std::fprintf(f, "{\"probe\": \"peer_probe\", \"iterations\": %d, \"figures\": {", iterations);
    for (size_t i = 0; i < figures.size(); ++i)
      std::fprintf(f, "%s\"%s\": {\"value\": %.4f, \"unit\": \"%s\"}", i ? ", " : "", figures[i].name.c_str(),
                   figures[i].value, figures[i].unit);
    std::fprintf(f, "}}\n");
    std::fclose(f);
  }
  return 0;
}
