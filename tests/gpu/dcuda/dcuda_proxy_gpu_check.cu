// dcuda between processes on one GPU: started N times (N >= 2) by `outboard dcuda run -n N --
// dcuda_proxy_gpu_check`. Every rank talks to ranks of the next process, so every command takes
// the path between processes: through the host proxies over UCX with DCUDA_PEER_PATH=0, else
// directly through the other process's memory mapped with CUDA IPC. Scenarios, each one dcuda_host_run:
//   who      world size, first rank and rank numbers agree across processes
//   order    batches of put_notify and put + notify (4 B .. 1 MiB, staged and read by the proxy)
//            to one remote rank: each notification finds its data complete
//   barrier  puts to every remote rank, no notifications: after a world barrier all are there
//   flush    a large put, dcuda_win_flush, the source rewritten: the target has the old data
//   counting test consumes only when enough have arrived, also with counters about to wrap
//   device   a window over DCUDA_COMM_DEVICE: puts and notifies address device ranks, which in
//            every process but the first differ from world ranks
// Exit 0 when all pass, 1 with what failed, 77 (ctest's skip) without a usable GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

namespace {

enum Scenario { kWho, kOrder, kBarrier, kFlush, kCounting, kWrapCounting, kDeviceWindow, kScenarios };
const char* const kNames[] = {"who", "order", "barrier", "flush", "counting", "counting near the wrap", "device window"};

// A batch's put sizes: staged (<= 4 KiB) and read from the source by the proxy. Sizes and
// offsets are ints, as dcuda_put takes them.
constexpr int kBatch = 7;
__host__ __device__ constexpr int size_of(int j) {
  constexpr int sizes[kBatch] = {4, 4096, 4097, 65536, 1 << 20, 12, 3000};
  return sizes[j];
}
constexpr int kBatches = 4;
constexpr int kInt = static_cast<int>(sizeof(int));
constexpr int kBarrierBytes = 65536 + 16;  // per source rank: a proxy-read part and a staged one
constexpr int kFlushBytes = 256 << 10;

__host__ __device__ constexpr uint64_t batch_bytes() {
  uint64_t n = 0;
  for (int j = 0; j < kBatch; ++j) n += size_of(j);
  return n;
}
__device__ int slot(int j) {
  int o = 0;
  for (int i = 0; i < j; ++i) o += size_of(i);
  return o;
}
__device__ unsigned char pattern(int source, int step, uint64_t k) {
  return static_cast<unsigned char>(source * 29 + step * 11 + k * 7 + (k >> 9));
}

struct Args {
  int scenario;
  int* failures;          // per local rank: checks that failed
  unsigned char* memory;  // per local rank: a window then a source, `stride` bytes each
  uint64_t stride;
};

__device__ void fail(const Args& a, int local) { atomicAdd(&a.failures[local], 1); }

// All threads compare `bytes` at `got` with pattern(source, step, ·).
__device__ void check(const Args& a, int local, const unsigned char* got, uint64_t bytes, int source, int step) {
  for (uint64_t k = threadIdx.x; k < bytes; k += blockDim.x)
    if (got[k] != pattern(source, step, k)) {
      fail(a, local);
      break;
    }
  __syncthreads();
}
__device__ void fill(unsigned char* p, uint64_t bytes, int source, int step) {
  for (uint64_t k = threadIdx.x; k < bytes; k += blockDim.x) p[k] = pattern(source, step, k);
  __syncthreads();
}
__device__ void expect(const Args& a, int local, bool ok) {
  if (threadIdx.x == 0 && !ok) fail(a, local);
}

__global__ void scenarios(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  void* data;
  dcuda_get_data(c, &data);
  const Args a = *static_cast<const Args*>(data);
  int me, world, local, here;
  dcuda_comm_rank(c, DCUDA_COMM_WORLD, &me);
  dcuda_comm_size(c, DCUDA_COMM_WORLD, &world);
  dcuda_comm_rank(c, DCUDA_COMM_DEVICE, &local);
  dcuda_comm_size(c, DCUDA_COMM_DEVICE, &here);
  const int target = (me + here) % world, source = (me - here + world) % world;  // ranks of other processes
  unsigned char* window = a.memory + 2 * a.stride * local;
  unsigned char* src = window + a.stride;
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, window, static_cast<int>(a.stride), &win);
  if (win == DCUDA_WIN_NONE) expect(a, local, false);
  switch (a.scenario) {
    case kWho:
      expect(a, local, me == static_cast<int>(c.p.first_rank) + local && world % here == 0 && world >= 2 * here);
      break;
    case kOrder:
      for (int b = 0; b < kBatches; ++b) {
        dcuda_win_flush(c, win);  // the last batch's sources may be rewritten
        for (int j = 0; j < kBatch; ++j) {
          const int step = b * kBatch + j;
          fill(src + slot(j), size_of(j), me, step);
          if (j % 2 == 0) {
            dcuda_put_notify(c, win, target, slot(j), size_of(j), src + slot(j), 1);
          } else {  // a large put then a small notify: the notify must not overtake it
            dcuda_put(c, win, target, slot(j), size_of(j), src + slot(j));
            dcuda_notify(c, target, DCUDA_COMM_WORLD, 1);
          }
        }
        for (int j = 0; j < kBatch; ++j) {
          dcuda_wait_notifications(c, 1, 1);
          check(a, local, window + slot(j), size_of(j), source, b * kBatch + j);
        }
        dcuda_notify(c, source, DCUDA_COMM_WORLD, 2);  // checked: the source may send the next batch
        dcuda_wait_notifications(c, 2, 1);  // and so may we
      }
      break;
    case kBarrier: {
      const int sources = world - here;  // every rank of the other processes puts into our window
      for (int t = 0, k = 0; t < world; ++t) {
        if (t / here == me / here) continue;
        fill(src + k * kBarrierBytes, kBarrierBytes, me, t);
        const int at = me * kBarrierBytes;
        dcuda_put(c, win, t, at, kBarrierBytes - 16, src + k * kBarrierBytes);
        dcuda_put(c, win, t, at + kBarrierBytes - 16, 16, src + k * kBarrierBytes + kBarrierBytes - 16);
        ++k;
      }
      dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
      for (int s = 0; s < world; ++s)
        if (s / here != me / here) check(a, local, window + s * kBarrierBytes, kBarrierBytes, s, me);
      expect(a, local, sources > 0);
      break;
    }
    case kFlush:
      fill(src, kFlushBytes, me, 1);
      dcuda_put(c, win, target, 0, kFlushBytes, src);
      dcuda_win_flush(c, win);
      fill(src, kFlushBytes, me, 2);  // the proxy no longer reads it
      dcuda_put_notify(c, win, target, kFlushBytes, kFlushBytes, src, 3);
      dcuda_wait_notifications(c, 3, 1);
      check(a, local, window, kFlushBytes, source, 1);
      check(a, local, window + kFlushBytes, kFlushBytes, source, 2);
      break;
    case kCounting:
    case kWrapCounting: {
      const int tag = 200;
      if (a.scenario == kWrapCounting && threadIdx.x == 0) {  // white box: the sum just below 2^32
        dcuda::detail::RankDevice& d = c.p.device[local];
        d.device_notes[tag] = 0xfffffffeu;
        // What the proxies and the other processes' ranks wrote was consumed.
        d.consumed_notes[tag] = 0xfffffffeu + d.network_notes[tag] + d.peer_notes[tag];
      }
      dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
      for (int i = 0; i < 3; ++i) dcuda_notify(c, target, DCUDA_COMM_WORLD, tag);
      dcuda_notify(c, target, DCUDA_COMM_WORLD, tag + 1);
      dcuda_wait_notifications(c, tag + 1, 1);  // after the three, in order
      expect(a, local, dcuda_test_notifications(c, tag, 4) == 0);
      expect(a, local, dcuda_test_notifications(c, tag, 3) == 1);
      expect(a, local, dcuda_test_notifications(c, tag, 1) == 0);
      break;
    }
    case kDeviceWindow: {
      // Each rank put_notifies its world rank into slot 0 of its right neighbour's window (by
      // device rank), puts its device rank into slot 1 and notifies that neighbour over the device
      // communicator; every rank notifies device rank 0. After a world barrier (all in place)
      // the ranks test what came, so what went astray shows as a count, not as a hang.
      // Two ints at the first 16-byte boundary of the rank's memory (`stride` need not be aligned).
      int* slots = reinterpret_cast<int*>((reinterpret_cast<uintptr_t>(window) + 15) & ~uintptr_t{15});
      dcuda_win dwin;
      dcuda_win_create(c, DCUDA_COMM_DEVICE, slots, 2 * kInt, &dwin);
      expect(a, local, dwin != DCUDA_WIN_NONE);
      if (dwin == DCUDA_WIN_NONE) break;  // no rank made it (a bad argument is everyone's)
      __shared__ int value[2];
      if (threadIdx.x == 0) value[0] = me, value[1] = local;
      __syncthreads();
      const int right = (local + 1) % here, left = (local + here - 1) % here;
      dcuda_put_notify(c, dwin, right, 0, kInt, value, 4);
      dcuda_put(c, dwin, right, kInt, kInt, value + 1);
      dcuda_notify(c, right, DCUDA_COMM_DEVICE, 4);
      dcuda_notify(c, 0, DCUDA_COMM_DEVICE, 5);
      dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
      expect(a, local, dcuda_test_notifications(c, 4, 2) == 1);
      expect(a, local, dcuda_test_notifications(c, 4, 1) == 0);  // no more than the left neighbour's two
      if (local == 0) expect(a, local, dcuda_test_notifications(c, 5, here) == 1);
      expect(a, local, dcuda_test_notifications(c, 5, 1) == 0);  // none to another rank than device rank 0
      expect(a, local, slots[0] == me - local + left && slots[1] == left);
      expect(a, local, dcuda_last_error(c) == DCUDA_SUCCESS);
      dcuda_comm_barrier(c, DCUDA_COMM_WORLD);  // all have read their windows
      dcuda_win_free(c, dwin);
      break;
    }
  }
  dcuda_win_free(c, win);
  dcuda_gpu_finish(c);
}


}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) return std::puts("skipped: no GPU"), 77;
  setenv("DCUDA_RANKS_PER_GPU", "4", 0);  // small grids: the processes' grids share the GPU
  dcuda_host_context_handle ctx = nullptr;
  dcuda_host_init(argc, argv, &ctx, scenarios, 128);
  if (dcuda_host_status(ctx) != DCUDA_SUCCESS) {
    std::fprintf(stderr, "dcuda_host_init: %s\n", dcuda_host_error(ctx));
    dcuda_host_finish(ctx);  // a failed context still is one
    return 1;
  }
  dcuda_rank_info info;
  dcuda_host_get_rank_info(ctx, &info);
  const int world = info.rank_count, here = info.rank_responsible, process = info.process_index;
  if (info.process_count < 2) return std::fprintf(stderr, "start it with `outboard dcuda run -n 2 -- %s`\n", argv[0]), 1;
  // Each window holds a batch, a region per rank for the barrier, or two flushed puts.
  uint64_t stride = batch_bytes();
  stride = std::max<uint64_t>(stride, static_cast<uint64_t>(kBarrierBytes) * world);
  stride = std::max<uint64_t>(stride, 2 * kFlushBytes);
  Args a{0, nullptr, nullptr, stride};
  if (cudaMalloc(&a.failures, sizeof(int) * here) != cudaSuccess || cudaMalloc(&a.memory, 2 * stride * here) != cudaSuccess)
    return std::fprintf(stderr, "out of device memory\n"), 1;
  int failed = 0;
  for (int s = 0; s < kScenarios; ++s) {
    a.scenario = s;
    cudaMemset(a.failures, 0, sizeof(int) * here);
    cudaMemset(a.memory, 0, 2 * stride * here);
    const double ms = dcuda_host_run(ctx, &a, sizeof a);
    std::vector<int> f(here);
    cudaMemcpy(f.data(), a.failures, sizeof(int) * here, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int v : f) bad += v;
    if (ms < 0 || bad) {
      std::printf("process %d: %s FAILED (%s%d failed checks)\n", process, kNames[s],
                  ms < 0 ? (std::string(dcuda_host_error(ctx)) + "; ").c_str() : "", bad);
      ++failed;
      if (ms < 0) break;  // the run is broken: the later scenarios would only repeat it
    } else {
      std::printf("process %d: %s ok (%.2f ms, %d ranks of %d)\n", process, kNames[s], ms, here, world);
    }
  }
  cudaFree(a.failures);
  cudaFree(a.memory);
  // The proxies drain and meet at the end: a failure then is one too (dcuda_host_finish prints it).
  if (dcuda_host_finish_status(ctx) != DCUDA_SUCCESS) ++failed;
  return failed ? 1 : 0;
}
