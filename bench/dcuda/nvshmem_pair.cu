// NVSHMEM's put-with-signal between two GPUs of one host, beside dcuda's peer path (issue 18):
// two processes, one PE per GPU, bootstrapped from a unique id that PE 0 writes into DIR and PE 1
// reads; one block of each PE plays ping-pong (4 B, 4 KiB put with signal, and the signal alone),
// timed on PE 0 with the GPU's nanosecond clock; one way = half the round trip. Built on the GPU
// machine against the NVSHMEM of its Python environment (bench/gpu/multi_gpu.sh); not part of
// the build.
//   nvshmem_pair DIR PE [ITERATIONS]      (PE 0 and PE 1 started at once)
#include <nvshmem.h>
#include <nvshmemx.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "system_scope.cuh"

// mode 0: put with signal of `bytes`; mode 1: signal only. PE 0 starts.
__global__ void pingpong(uint64_t* signal, char* buffer, size_t bytes, int iterations, int mode,
                         unsigned long long* elapsed) {
  const int me = nvshmem_my_pe(), other = 1 - me;
  auto send = [&](int i) {
    if (mode == 0) nvshmemx_putmem_signal_block(buffer + 4096, buffer, bytes, signal, i, NVSHMEM_SIGNAL_SET, other);
    else if (threadIdx.x == 0) nvshmemx_signal_op(signal, i, NVSHMEM_SIGNAL_SET, other);
  };
  auto wait = [&](int i) {
    if (threadIdx.x == 0) nvshmem_signal_wait_until(signal, NVSHMEM_CMP_GE, i);
    __syncthreads();
  };
  const unsigned long long start = globaltimer_ns();
  for (int i = 1; i <= iterations; ++i) {
    if (me == 0) send(i), wait(i);
    else wait(i), send(i);
  }
  if (threadIdx.x == 0) *elapsed = globaltimer_ns() - start;
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 3) return std::fprintf(stderr, "usage: nvshmem_pair DIR PE [ITERATIONS]\n"), 2;
  const std::string dir = argv[1];
  const int pe = std::atoi(argv[2]), iterations = argc > 3 ? std::atoi(argv[3]) : 20000;
  // The runtime's context first: NVSHMEM's initialisation fails without one.
  if (cudaSetDevice(pe) != cudaSuccess || cudaFree(nullptr) != cudaSuccess)
    return std::fprintf(stderr, "nvshmem_pair: no GPU %d\n", pe), 1;
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  const std::string path = dir + "/nvshmem-id";
  if (pe == 0) {
    if (nvshmemx_get_uniqueid(&id) != 0) return std::fprintf(stderr, "nvshmem_pair: no unique id\n"), 1;
    FILE* f = std::fopen((path + ".tmp").c_str(), "wb");
    if (!f || std::fwrite(&id, sizeof id, 1, f) != 1 || std::fclose(f) != 0) return std::perror("nvshmem_pair: id"), 1;
    std::rename((path + ".tmp").c_str(), path.c_str());
  } else {
    for (int i = 0;; ++i) {
      FILE* f = std::fopen(path.c_str(), "rb");
      const bool got = f && std::fread(&id, sizeof id, 1, f) == 1;
      if (f) std::fclose(f);
      if (got) break;
      if (i > 3000) return std::fprintf(stderr, "nvshmem_pair: no id from PE 0 within 30 s\n"), 1;
      usleep(10000);
    }
  }
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (nvshmemx_set_attr_uniqueid_args(pe, 2, &id, &attr) != 0 || nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0)
    return std::fprintf(stderr, "nvshmem_pair: NVSHMEM did not start (PE %d)\n", pe), 1;
  uint64_t* signal = static_cast<uint64_t*>(nvshmem_calloc(1, sizeof(uint64_t)));
  char* buffer = static_cast<char*>(nvshmem_calloc(1, 8192));
  unsigned long long* elapsed = nullptr;
  cudaMalloc(&elapsed, sizeof(unsigned long long));
  const struct {
    const char* name;
    size_t bytes;
    int mode;
  } cases[] = {
      {"NVSHMEM putmem_signal_block 4 B one way, GPU 0 <-> GPU 1", 4, 0},
      {"NVSHMEM putmem_signal_block 4096 B one way, GPU 0 <-> GPU 1", 4096, 0},
      {"NVSHMEM signal_op one way, GPU 0 <-> GPU 1", 0, 1},
  };
  for (const auto& c : cases) {
    unsigned long long ns = 0;
    for (int round = 0; round < 2; ++round) {  // the first warms up
      cudaMemset(signal, 0, sizeof(uint64_t));
      nvshmem_barrier_all();
      pingpong<<<1, 256>>>(signal, buffer, c.bytes, iterations, c.mode, elapsed);
      if (cudaDeviceSynchronize() != cudaSuccess) return std::fprintf(stderr, "nvshmem_pair: kernel failed\n"), 1;
      nvshmem_barrier_all();
    }
    cudaMemcpy(&ns, elapsed, sizeof ns, cudaMemcpyDeviceToHost);
    if (pe == 0) std::printf("%-62s %10.3f us\n", c.name, ns / 1e3 / iterations / 2);
  }
  nvshmem_free(buffer);
  nvshmem_free(signal);
  nvshmem_finalize();
  return 0;
}
