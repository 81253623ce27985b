// NVSHMEM beside dcuda on one GPU (dcuda_bench's same-GPU ping-pong, for comparison): two blocks
// of one PE ping-pong a put-with-signal (4 B, 4 KiB) or a signal alone, timed in the kernel; one
// way = half the round trip. Built on the GPU machine against the NVSHMEM of its Python
// environment (bench/gpu/dcuda_h200.sh); not part of the build.
//   nvshmem_pingpong [ITERATIONS]
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>

#include "system_scope.cuh"

// mode 0: put with signal of `bytes`; mode 1: signal only.
__global__ void pingpong(uint64_t* signals, char* buffers, size_t bytes, int iterations, int mode,
                         unsigned long long* elapsed) {
  const int me = nvshmem_my_pe(), b = blockIdx.x, other = 1 - b;
  char* mine = buffers + b * 8192;
  char* theirs = buffers + other * 8192 + 4096;
  const unsigned long long start = globaltimer_ns();
  for (int i = 1; i <= iterations; ++i) {
    if (b == 1) {
      if (threadIdx.x == 0) nvshmem_signal_wait_until(signals + b, NVSHMEM_CMP_GE, i);
      __syncthreads();
    }
    if (mode == 0) nvshmemx_putmem_signal_block(theirs, mine, bytes, signals + other, i, NVSHMEM_SIGNAL_SET, me);
    else if (threadIdx.x == 0) nvshmemx_signal_op(signals + other, i, NVSHMEM_SIGNAL_SET, me);
    if (b == 0) {
      if (threadIdx.x == 0) nvshmem_signal_wait_until(signals + b, NVSHMEM_CMP_GE, i);
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) elapsed[b] = globaltimer_ns() - start;
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  // NVSHMEM's initialisation fails ("nvshmem initialization failed ... mutex destroy failed")
  // unless the CUDA runtime already has a context on the device: make one first.
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess)
    return std::fprintf(stderr, "nvshmem_pingpong: no GPU\n"), 1;
  // One PE, no launcher: bootstrapped from a unique id of its own.
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (nvshmemx_get_uniqueid(&id) != 0 || nvshmemx_set_attr_uniqueid_args(0, 1, &id, &attr) != 0 ||
      nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0)
    return std::fprintf(stderr, "nvshmem_pingpong: NVSHMEM did not start\n"), 1;
  uint64_t* signals = static_cast<uint64_t*>(nvshmem_calloc(2, sizeof(uint64_t)));
  char* buffers = static_cast<char*>(nvshmem_calloc(2, 8192));
  unsigned long long* elapsed = nullptr;
  cudaMalloc(&elapsed, 2 * sizeof(unsigned long long));
  const struct { const char* name; size_t bytes; int mode; } cases[] = {
      {"NVSHMEM putmem_signal_block 4 B one way", 4, 0},
      {"NVSHMEM putmem_signal_block 4096 B one way", 4096, 0},
      {"NVSHMEM signal_op one way", 0, 1},
  };
  for (const auto& c : cases) {
    unsigned long long ns[2] = {0, 0};
    for (int round = 0; round < 2; ++round) {  // the first warms up
      cudaMemset(signals, 0, 2 * sizeof(uint64_t));
      pingpong<<<2, 256>>>(signals, buffers, c.bytes, iterations, c.mode, elapsed);
      if (cudaDeviceSynchronize() != cudaSuccess) return std::fprintf(stderr, "nvshmem_pingpong: kernel failed\n"), 1;
    }
    cudaMemcpy(ns, elapsed, sizeof ns, cudaMemcpyDeviceToHost);
    std::printf("%-52s %10.3f us\n", c.name, ns[0] / 1e3 / iterations / 2);
  }
  nvshmem_free(buffers);
  nvshmem_free(signals);
  nvshmem_finalize();
  return 0;
}
