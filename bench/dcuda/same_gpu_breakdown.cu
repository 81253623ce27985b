// Where dcuda's same-GPU notified access spends its time above the bare floor (same_gpu_floor):
// a ping-pong between ranks 0 and 1 of one dcuda launch, 4-byte payloads, each side either the
// dcuda call or the same steps written bare inside the same kernel, so the cost of the sender's
// call and of the waiter's call show apart. One way = half the round trip (GPU nanosecond clock).
//   same_gpu_breakdown [ITERATIONS]      threads per rank: DCUDA_BENCH_THREADS (128)
// Lines "breakdown.<send>/<wait> ns_one_way":
//   dcuda/dcuda  dcuda_put_notify, dcuda_wait_notifications (dcuda_bench's figure)
//   bare/dcuda   the leader stores the 4 bytes into the window, a barrier, a device-scope release
//                add on the target's counter; dcuda_wait_notifications
//   dcuda/bare   dcuda_put_notify; the leader polls its counter (acquire), one barrier
//   bare/bare    both bare, inside the dcuda kernel (compare with same_gpu_floor's put4_block)
//   notify       dcuda_notify, dcuda_wait_notifications
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

namespace {

enum Mode { kDcudaDcuda, kBareDcuda, kDcudaBare, kBareBare, kNotify, kModes };
const char* const kNames[kModes] = {"dcuda/dcuda", "bare/dcuda", "dcuda/bare", "bare/bare", "notify"};
constexpr int kTag = 1;

struct Args {
  int mode, iterations;
  unsigned* buffers;  // per rank: a 4-byte source and a 4-byte window, 64 bytes apart
  unsigned long long* elapsed;
};

__device__ void bare_send(dcuda_state& c, dcuda_win win, int peer, const unsigned* src) {
  using namespace dcuda::detail;
  BlockState& s = c;
  if (leader()) {
    RankDevice& to = s.p.device[peer - s.p.first_rank];
    *reinterpret_cast<unsigned*>(to.windows[win].base) = *src;
  }
  __syncthreads();
  if (leader()) fetch_add_release<Scope::device>(&s.p.device[peer - s.p.first_rank].device_notes[kTag], 1);
}

// Waits for the count `expected` (the dcuda counters are left as if dcuda_wait had consumed it).
__device__ void bare_wait(dcuda_state& c, unsigned expected) {
  using namespace dcuda::detail;
  BlockState& s = c;
  if (leader()) {
    while (!reached(load_acquire<Scope::device>(&s.self->device_notes[kTag]), expected)) {
    }
    s.self->consumed_notes[kTag] = expected;
  }
  __syncthreads();
}

__global__ void pingpong(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  void* data;
  dcuda_get_data(c, &data);
  const Args a = *static_cast<const Args*>(data);
  int r;
  dcuda_comm_rank(c, DCUDA_COMM_WORLD, &r);
  unsigned* src = a.buffers + 32 * r;
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, src + 16, static_cast<int>(sizeof(unsigned)), &win);
  dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
  const unsigned long long start = dcuda::detail::globaltimer();
  if (r < 2) {
    const int peer = r ^ 1;
    const bool bare_send_side = a.mode == kBareDcuda || a.mode == kBareBare;
    const bool bare_wait_side = a.mode == kDcudaBare || a.mode == kBareBare;
    const unsigned base = c.self->consumed_notes[kTag];  // nothing pending between runs
    __syncthreads();
    auto send = [&] {
      if (a.mode == kNotify) dcuda_notify(c, peer, DCUDA_COMM_WORLD, kTag);  // a world window: world ranks
      else if (bare_send_side) bare_send(c, win, peer, src);
      else dcuda_put_notify(c, win, peer, 0, static_cast<int>(sizeof(unsigned)), src, kTag);
    };
    auto wait = [&](int i) {
      if (bare_wait_side) bare_wait(c, base + static_cast<unsigned>(i) + 1);
      else dcuda_wait_notifications(c, kTag, 1);
    };
    for (int i = 0; i < a.iterations; ++i) {
      if (r == 0) send(), wait(i);
      else wait(i), send();
    }
  }
  if (threadIdx.x == 0 && r < 2) a.elapsed[r] = dcuda::detail::globaltimer() - start;
  dcuda_win_free(c, win);
  dcuda_gpu_finish(c);
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  const char* t = std::getenv("DCUDA_BENCH_THREADS");
  const int threads = t ? std::atoi(t) : 128;
  if (iterations < 1) return 1;
  dcuda_host_context_handle ctx;
  dcuda_host_init(argc, argv, &ctx, pingpong, threads);  // a failure is printed
  if (dcuda_host_status(ctx) != DCUDA_SUCCESS) {
    dcuda_host_finish(ctx);
    return 1;
  }
  dcuda_rank_info info;
  dcuda_host_get_rank_info(ctx, &info);
  const int world = info.rank_count, processes = info.process_count;
  if (processes != 1 || world < 2)
    return std::fprintf(stderr, "same_gpu_breakdown: one process, two ranks or more\n"), 1;
  unsigned* buffers = nullptr;
  unsigned long long* elapsed = nullptr;
  if (cudaMalloc(&buffers, 128 * world) != cudaSuccess ||
      cudaMallocManaged(&elapsed, 2 * sizeof(unsigned long long)) != cudaSuccess)
    return std::fprintf(stderr, "same_gpu_breakdown: out of device memory\n"), 1;
  cudaMemset(buffers, 1, 128 * world);
  std::printf("same_gpu_breakdown: %d ranks of %d threads, %d round trips, 4 bytes\n", world, threads, iterations);
  for (int mode = 0; mode < kModes; ++mode) {
    Args a{mode, iterations, buffers, elapsed};  // copied back after each run, unchanged
    for (int round = 0; round < 2; ++round)  // the first is a warm-up
      if (dcuda_host_run(ctx, &a, sizeof a) < 0) return 1;  // dcuda_host_run printed dcuda_host_error's line
    std::printf("breakdown.%s %.1f ns one way\n", kNames[mode], elapsed[0] / (2.0 * iterations));
  }
  dcuda_host_finish(ctx);
  return 0;
}
