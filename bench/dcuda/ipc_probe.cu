// Probe for dcuda's path between processes of one host without the host (issue 16, path 2): can
// a process export and open CUDA IPC handles while a kernel of its own is running (dcuda's windows
// are made inside the running kernel), and what does a block-to-block ping-pong through memory
// mapped from the other process cost? Two processes, started by bench/gpu/dcuda_h200.sh's `ipc`
// step: `ipc_probe DIR 0` and `ipc_probe DIR 1` (DIR: where they swap their handles).
// Each process holds a kernel running (spinning on a host flag) while it calls
// cudaIpcGetMemHandle and cudaIpcOpenMemHandle, each under a watchdog that reports a hang.
#include <cuda_runtime.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "system_scope.cuh"

namespace {

// Keeps the process's context busy until the host sets *release.
__global__ void hold(const unsigned* release) {
  while (load_sys(release) == 0) __nanosleep(1000);
}

// Role 0 starts: writes i into the peer's memory, waits for i in its own; role 1 answers.
__global__ void pingpong(unsigned* mine, unsigned* theirs, int iterations, int role, unsigned long long* ns) {
  if (threadIdx.x != 0) return;
  const unsigned long long start = globaltimer_ns();
  for (int i = 1; i <= iterations; ++i) {
    if (role == 0) store_sys(theirs, i);
    while (load_sys(mine) != static_cast<unsigned>(i)) {
    }
    if (role == 1) store_sys(theirs, i);
  }
  *ns = globaltimer_ns() - start;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e)), std::exit(1);
}

// Runs `f`, printing how long it took; a call that takes over 20 s is reported and ends the probe.
template <class F>
void timed(const char* what, F&& f) {
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 2000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!done) std::printf("%s: HUNG (over 20 s)\n", what), std::fflush(stdout), std::_Exit(3);
  });
  const auto t0 = std::chrono::steady_clock::now();
  f();
  done = true;
  watchdog.join();
  std::printf("%s: %.3f ms\n", what, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 3) return std::fprintf(stderr, "usage: ipc_probe DIR ROLE [ITERATIONS]\n"), 2;
  const std::string dir = argv[1];
  const int role = std::atoi(argv[2]), iterations = argc > 3 ? std::atoi(argv[3]) : 20000;
  const bool holding = !(argc > 4 && std::string(argv[4]) == "nohold");  // nohold: no kernel during the IPC calls
  check(cudaSetDevice(0), "cudaSetDevice");
  unsigned *mine = nullptr, *release = nullptr, *release_dev = nullptr, *theirs = nullptr;
  unsigned long long* ns = nullptr;
  check(cudaMalloc(&mine, 1 << 20), "cudaMalloc");
  check(cudaMemset(mine, 0, 1 << 20), "cudaMemset");
  check(cudaMalloc(&ns, sizeof *ns), "cudaMalloc");
  check(cudaHostAlloc(&release, 64, cudaHostAllocMapped), "cudaHostAlloc");
  check(cudaHostGetDevicePointer(&release_dev, release, 0), "cudaHostGetDevicePointer");
  *release = 0;
  cudaStream_t busy, work;
  check(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking), "stream");
  check(cudaDeviceSynchronize(), "sync");
  if (holding) hold<<<1, 32, 0, busy>>>(release_dev);
  check(cudaGetLastError(), "launch hold");
  cudaIpcMemHandle_t handle;
  timed("cudaIpcGetMemHandle while a kernel runs", [&] { check(cudaIpcGetMemHandle(&handle, mine), "cudaIpcGetMemHandle"); });
  const std::string out = dir + "/handle." + std::to_string(role), in = dir + "/handle." + std::to_string(1 - role);
  FILE* f = std::fopen((out + ".tmp").c_str(), "wb");
  if (!f || std::fwrite(&handle, sizeof handle, 1, f) != 1 || std::fclose(f) != 0) return std::perror("write handle"), 1;
  std::rename((out + ".tmp").c_str(), out.c_str());
  cudaIpcMemHandle_t peer;
  for (int i = 0;; ++i) {
    FILE* g = std::fopen(in.c_str(), "rb");
    if (g && std::fread(&peer, sizeof peer, 1, g) == 1) {
      std::fclose(g);
      break;
    }
    if (g) std::fclose(g);
    if (i > 3000) return std::fprintf(stderr, "no handle from the peer\n"), 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  timed("cudaIpcOpenMemHandle while a kernel runs", [&] {
    check(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&theirs), peer, cudaIpcMemLazyEnablePeerAccess),
          "cudaIpcOpenMemHandle");
  });
  // Both kernels of this process run at once (the holder and the ping-pong), as a dcuda kernel
  // would while its proxy maps a peer's window.
  pingpong<<<1, 32, 0, work>>>(mine, theirs, iterations, role, ns);
  check(cudaGetLastError(), "launch pingpong");
  // The holder ends first: whether a second kernel of the process runs beside it is the next question.
  if (!holding || (argc > 4 && std::string(argv[4]) == "release")) *release = 1;
  timed("ping-pong", [&] { check(cudaStreamSynchronize(work), "pingpong"); });
  unsigned long long t = 0;
  check(cudaMemcpy(&t, ns, sizeof t, cudaMemcpyDeviceToHost), "copy");
  if (role == 0)
    std::printf("block to block through IPC-mapped memory of the other process: %.3f us one way (%d round trips)\n",
                t / 1e3 / iterations / 2, iterations);
  *release = 1;
  check(cudaDeviceSynchronize(), "sync");
  check(cudaIpcCloseMemHandle(theirs), "cudaIpcCloseMemHandle");
  return 0;
}
