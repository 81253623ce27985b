// dcuda's figures: the one-way latency of a notified access and of a notify (ping-pong between two
// ranks, half the round trip; 4 B and 4 KiB) and the bandwidth of 1 MiB puts (one rank to
// another, and every pair of ranks at once). In one process the pairs are ranks of one GPU
// (2k, 2k+1); started as two processes (`outboard dcuda run -n 2 -- dcuda_bench`) each pair is a
// rank of process 0 and its counterpart in process 1, so every command takes the host proxy.
// Timed inside the kernel with the GPU's nanosecond clock; process 0 prints one line per figure
// and, with a path argument, writes them as JSON.
//   dcuda_bench [ITERATIONS] [RESULT.json]      threads per rank: DCUDA_BENCH_THREADS (256)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

namespace {

enum Mode { kPingPong = 0, kNotifyPingPong = 1, kStream = 2 };

struct Args {
  int mode;
  int iterations;
  uint64_t bytes;
  int pairs;             // streaming: the initiators of pairs 0 .. pairs-1 put to their peers
  unsigned char* buffers;  // per rank: a source and a window of `stride` bytes each
  uint64_t stride;
  uint64_t* elapsed;     // per rank, ns
};

// kMaxThreads bounds the registers: bench<512> (ranks of up to 512 threads) needs no more than
// it takes; bench<1024> is held to 64 registers per thread, without which not one rank of 1024
// threads fits on an SM (it spills a little).
template <int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads) bench(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  void* data;
  dcuda_get_data(c, &data);
  const Args a = *static_cast<const Args*>(data);
  int r, local, here, world;
  dcuda_comm_rank(c, DCUDA_COMM_WORLD, &r);
  dcuda_comm_rank(c, DCUDA_COMM_DEVICE, &local);
  unsigned char* src = a.buffers + 2 * a.stride * local;
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, src + a.stride, static_cast<int>(a.stride), &win);
  // Pair k: initiator and responder, on one GPU or in the two processes. The window is over the
  // world, so `peer` is a world rank.
  dcuda_comm_size(c, DCUDA_COMM_DEVICE, &here);
  dcuda_comm_size(c, DCUDA_COMM_WORLD, &world);
  const bool across = world > here;
  const bool initiator = across ? r < here : r % 2 == 0;
  const int pair = across ? r % here : r / 2;
  const int peer = across ? (initiator ? r + here : r - here) : r ^ 1;
  const bool active = peer < world && (a.mode == kStream ? pair < a.pairs : pair == 0);
  const int bytes = static_cast<int>(a.bytes);  // the calls take int sizes: cast once, not per call
  dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
  const uint64_t start = dcuda::detail::globaltimer();
  if (active && a.mode != kStream) {
    for (int i = 0; i < a.iterations; ++i) {
      if (initiator) {
        if (a.mode == kPingPong) dcuda_put_notify(c, win, peer, 0, bytes, src, 1);
        else dcuda_notify(c, peer, DCUDA_COMM_WORLD, 1);
        dcuda_wait_notifications(c, 1, 1);
      } else {
        dcuda_wait_notifications(c, 1, 1);
        if (a.mode == kPingPong) dcuda_put_notify(c, win, peer, 0, bytes, src, 1);
        else dcuda_notify(c, peer, DCUDA_COMM_WORLD, 1);
      }
    }
  } else if (active) {
    if (initiator) {
      for (int i = 0; i < a.iterations; ++i) dcuda_put_notify(c, win, peer, 0, bytes, src, 2);
      dcuda_wait_notifications(c, 3, 1);  // the receiver has all of them
    } else {
      dcuda_wait_notifications(c, 2, a.iterations);
      dcuda_notify(c, peer, DCUDA_COMM_WORLD, 3);
    }
  }
  if (threadIdx.x == 0) a.elapsed[local] = dcuda::detail::globaltimer() - start;
  dcuda_win_free(c, win);
  dcuda_gpu_finish(c);
}

struct Figure {
  std::string name;
  double value;
  std::string unit;
};

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 10000;
  const char* json = argc > 2 ? argv[2] : nullptr;
  const int threads = std::getenv("DCUDA_BENCH_THREADS") ? std::atoi(std::getenv("DCUDA_BENCH_THREADS")) : 256;
  if (iterations < 1) return 1;
  dcuda_host_context_handle ctx;
  dcuda_kernel_t kernel = threads > 512 ? bench<1024> : bench<512>;
  dcuda_host_init(argc, argv, &ctx, kernel, threads);  // a failure is printed
  if (dcuda_host_status(ctx) != DCUDA_SUCCESS) {
    dcuda_host_finish(ctx);
    return 1;
  }
  dcuda_rank_info info;
  dcuda_host_get_rank_info(ctx, &info);
  const int world = info.rank_count, ranks = info.rank_responsible;  // `ranks`: this process's
  const int process = info.process_index, processes = info.process_count;
  if (processes > 2) return std::fprintf(stderr, "dcuda_bench: one or two processes\n"), 1;
  const bool across = processes == 2;
  const int pairs = across ? ranks : ranks / 2;
  // Across processes: through the proxies when DCUDA_PEER_PATH=0, else directly where the other
  // process's memory could be mapped (one host).
  const char* peer_env = std::getenv("DCUDA_PEER_PATH");
  const std::string where = !across ? "same GPU" : peer_env && std::string(peer_env) == "0" ? "proxy" : "other process";
  auto initiator = [&](int k) { return across ? k : 2 * k; };  // pair k's initiator, a local index
  const uint64_t stride = 1 << 20;
  unsigned char* buffers = nullptr;
  uint64_t* elapsed = nullptr;
  if (cudaMalloc(&buffers, 2 * stride * ranks) != cudaSuccess || cudaMalloc(&elapsed, sizeof(uint64_t) * ranks) != cudaSuccess)
    return std::fprintf(stderr, "dcuda_bench: out of device memory\n"), 1;
  cudaMemset(buffers, 1, 2 * stride * ranks);
  std::vector<uint64_t> ns(ranks);
  std::vector<Figure> figures;
  auto run = [&](int mode, int n, uint64_t bytes, int pairs) -> bool {
    Args a{mode, n, bytes, pairs, buffers, stride, elapsed};  // copied back after each run, unchanged
    dcuda_host_run(ctx, &a, sizeof a);  // warm-up
    if (dcuda_host_run(ctx, &a, sizeof a) < 0) return false;  // dcuda_host_run printed dcuda_host_error's line
    cudaMemcpy(ns.data(), elapsed, sizeof(uint64_t) * ranks, cudaMemcpyDeviceToHost);
    return true;
  };
  if (process == 0)
    std::printf("dcuda_bench: %d ranks of %d threads in %d process(es) on one GPU, %d iterations\n", world, threads,
                processes, iterations);
  for (uint64_t bytes : {4ull, 4096ull}) {
    if (!run(kPingPong, iterations, bytes, 0)) return 1;
    const double us = ns[0] / 1e3 / iterations / 2;
    figures.push_back({where + " put_notify " + std::to_string(bytes) + " B one way", us, "us"});
  }
  if (!run(kNotifyPingPong, iterations, 0, 0)) return 1;
  figures.push_back({where + " notify one way", ns[0] / 1e3 / iterations / 2, "us"});
  const int stream_iterations = iterations / 10 > 10 ? iterations / 10 : 10;
  if (!run(kStream, stream_iterations, stride, 1)) return 1;
  figures.push_back({where + " 1 MiB put bandwidth, one rank", double(stride) * stream_iterations / ns[0], "GB/s"});
  if (!run(kStream, stream_iterations, stride, pairs)) return 1;
  uint64_t slowest = 0;
  for (int k = 0; k < pairs; ++k) slowest = ns[initiator(k)] > slowest ? ns[initiator(k)] : slowest;
  figures.push_back({where + " 1 MiB put bandwidth, " + std::to_string(pairs) + " pairs aggregate",
                     double(stride) * stream_iterations * pairs / slowest, "GB/s"});
  if (process != 0) figures.clear();  // process 0 holds the initiators' clocks
  FILE* out = json && process == 0 ? std::fopen(json, "w") : nullptr;
  if (out)
    std::fprintf(out, "{\"ranks\": %d, \"processes\": %d, \"threads\": %d, \"iterations\": %d, \"figures\": [\n", world,
                 processes, threads, iterations);
  for (size_t i = 0; i < figures.size(); ++i) {
    std::printf("%-52s %10.3f %s\n", figures[i].name.c_str(), figures[i].value, figures[i].unit.c_str());
    if (out)
      std::fprintf(out, "  {\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\"}%s\n", figures[i].name.c_str(), figures[i].value,
                   figures[i].unit.c_str(), i + 1 < figures.size() ? "," : "");
  }
  if (out) std::fprintf(out, "]}\n"), std::fclose(out);
  cudaFree(buffers);
  cudaFree(elapsed);
  dcuda_host_finish(ctx);  // a proxy failure is printed (it no longer sets the exit status)
  return 0;
}
