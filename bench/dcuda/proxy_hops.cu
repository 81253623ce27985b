// What each hop of dcuda's host-proxy path costs on this machine: one GPU block and one host
// thread play ping-pong through each way the proxy can reach a waiting rank, and the half round
// trip is printed. The block always answers through page-locked host memory (as a rank posts to
// its ring); the host answers by
//   mapped      a store into page-locked host memory the block polls (system-scope acquire)
//   write32     cuStreamWriteValue32 into device memory (the proxy's stream-ordered counter)
//   copy+write  a 4-byte cudaMemcpyAsync, then cuStreamWriteValue32 behind it (a staged put_notify)
//   copy+event  the same copy, its event polled by the host, then a mapped store
// So "write32 - mapped" is what the stream-ordered counter adds over a host-memory one.
//   proxy_hops [ITERATIONS]
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "system_scope.cuh"

namespace {

enum Way { kMapped, kWrite32, kCopyWrite, kCopyEvent, kWays };
const char* const kNames[] = {"mapped", "write32", "copy+write", "copy+event"};


// ping: host-mapped, written by the block; pong: where the host answers (mapped or device).
__global__ void block(unsigned* ping, const unsigned* pong, int iterations) {
  if (threadIdx.x != 0) return;
  for (int i = 1; i <= iterations; ++i) {
    store_sys(ping, i);
    while (load_sys(pong) != static_cast<unsigned>(i)) {
    }
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e)), std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  check(cudaSetDevice(0), "cudaSetDevice");
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 11070, cudaEnableDefault, &found), "entry point");
  auto write32 = reinterpret_cast<PFN_cuStreamWriteValue32_v11070>(fn);
  unsigned *host = nullptr, *host_dev = nullptr, *dev = nullptr, *staged = nullptr;
  check(cudaHostAlloc(&host, 4096, cudaHostAllocMapped), "cudaHostAlloc");
  check(cudaHostGetDevicePointer(&host_dev, host, 0), "cudaHostGetDevicePointer");
  check(cudaMalloc(&dev, 64), "cudaMalloc");
  check(cudaHostAlloc(&staged, 64, cudaHostAllocDefault), "cudaHostAlloc");
  cudaStream_t kernel_stream, proxy;
  check(cudaStreamCreateWithFlags(&kernel_stream, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&proxy, cudaStreamNonBlocking), "stream");
  cudaEvent_t event;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "event");
  auto* ping = reinterpret_cast<volatile unsigned*>(host);
  auto* pong_host = reinterpret_cast<std::atomic<unsigned>*>(host + 16);  // another cache line
  std::printf("proxy_hops: %d round trips each, one block <-> one host thread, half round trip\n", iterations);
  for (int way = 0; way < kWays; ++way) {
    host[0] = 0, host[16] = 0;
    check(cudaMemset(dev, 0, 64), "cudaMemset");
    check(cudaDeviceSynchronize(), "sync");
    const unsigned* pong = way == kMapped || way == kCopyEvent ? host_dev + 16 : dev;
    block<<<1, 32, 0, kernel_stream>>>(host_dev, pong, iterations);
    check(cudaGetLastError(), "launch");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 1; i <= iterations; ++i) {
      while (*ping != static_cast<unsigned>(i)) {
      }
      switch (way) {
        case kMapped:
          pong_host->store(i, std::memory_order_release);
          break;
        case kWrite32:
          write32(reinterpret_cast<CUstream>(proxy), reinterpret_cast<CUdeviceptr>(dev), i, CU_STREAM_WRITE_VALUE_DEFAULT);
          break;
        case kCopyWrite:
          staged[0] = i;
          cudaMemcpyAsync(dev + 8, staged, 4, cudaMemcpyHostToDevice, proxy);
          write32(reinterpret_cast<CUstream>(proxy), reinterpret_cast<CUdeviceptr>(dev), i, CU_STREAM_WRITE_VALUE_DEFAULT);
          break;
        case kCopyEvent:
          staged[0] = i;
          cudaMemcpyAsync(dev + 8, staged, 4, cudaMemcpyHostToDevice, proxy);
          cudaEventRecord(event, proxy);
          while (cudaEventQuery(event) == cudaErrorNotReady) {
          }
          pong_host->store(i, std::memory_order_release);
          break;
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    check(cudaDeviceSynchronize(), "the block");
    std::printf("%-12s %8.3f us one way\n", kNames[way], s / iterations / 2 * 1e6);
  }
  return 0;
}
