// dcuda on one GPU: every rank a block of one cooperative launch, all paths same-GPU. Each test
// runs a kernel through the public host API and checks what the ranks recorded. They skip where
// no GPU can be used.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

#include "need_gpu.hpp"

namespace {

// Device memory of `n` T, zeroed, freed at scope exit.
template <class T>
struct DeviceArray {
  T* p = nullptr;
  size_t n;
  explicit DeviceArray(size_t count) : n(count) {
    EXPECT_EQ(cudaMalloc(&p, sizeof(T) * n), cudaSuccess);
    cudaMemset(p, 0, sizeof(T) * n);
  }
  ~DeviceArray() { cudaFree(p); }
  std::vector<T> get() const {
    std::vector<T> v(n);
    cudaMemcpy(v.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost);
    return v;
  }
};

// A context for `kernel` with `ranks` ranks (DCUDA_RANKS_PER_GPU), freed at scope exit.
struct Session {
  dcuda_host_context ctx = nullptr;
  int rc;
  Session(dcuda_kernel kernel, int threads, int ranks) {
    if (ranks > 0) setenv("DCUDA_RANKS_PER_GPU", std::to_string(ranks).c_str(), 1);
    rc = dcuda_host_init(nullptr, nullptr, &ctx, kernel, threads);
    unsetenv("DCUDA_RANKS_PER_GPU");
  }
  ~Session() {
    if (ctx) dcuda_host_finish(ctx);
  }
};

struct Args {
  int* out;      // per-rank results
  int* window;   // per-rank window memory
  int count;
  int arg;
};

__device__ Args args_of(dcuda_context& c) { return *static_cast<const Args*>(dcuda_get_data(c)); }

// Each rank records its world rank and the world's size.
__global__ void who(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  Args a = args_of(c);
  const int r = dcuda_comm_rank(c, DCUDA_COMM_WORLD);
  if (threadIdx.x == 0) a.out[2 * r] = r, a.out[2 * r + 1] = dcuda_comm_size(c, DCUDA_COMM_DEVICE);
  dcuda_gpu_finish(c);
}

TEST(Dcuda, RanksAreBlocks) {
  NEED_GPU();
  Session run(who, 128, 8);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  int size = 0, here = 0, processes = 0;
  dcuda_host_get_rank_info(run.ctx, &size, nullptr, &here, nullptr, &processes);
  EXPECT_EQ(size, 8);
  EXPECT_EQ(here, 8);
  EXPECT_EQ(processes, 1);
  DeviceArray<int> out(16);
  Args a{out.p, nullptr, 0, 0};
  ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
  auto v = out.get();
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(v[2 * r], r);
    EXPECT_EQ(v[2 * r + 1], 8);
  }
}

// A ring: every rank puts its rank into its right neighbour's window at slot `count` times,
// notifying each time; the receiver checks, on each notification, that the data is already there.
__global__ void ring(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  Args a = args_of(c);
  const int r = dcuda_comm_rank(c, DCUDA_COMM_WORLD), n = dcuda_comm_size(c, DCUDA_COMM_WORLD);
  int* mine = a.window + r * a.count;
  dcuda_win win;
  if (dcuda_win_create(c, DCUDA_COMM_WORLD, mine, sizeof(int) * a.count, &win) != DCUDA_SUCCESS) return;
  __shared__ int value[1];
  int bad = 0;
  for (int k = 0; k < a.count; ++k) {
    if (threadIdx.x == 0) value[0] = r * 100000 + k;
    __syncthreads();
    dcuda_put_notify(c, win, (r + 1) % n, sizeof(int) * k, sizeof(int), value, 7);
    dcuda_wait_notifications(c, 7, 1);
    const int left = (r + n - 1) % n;
    if (threadIdx.x == 0 && mine[k] != left * 100000 + k) ++bad;
    __syncthreads();
  }
  if (threadIdx.x == 0) a.out[r] = bad;
  dcuda_win_free(c, win);
  dcuda_gpu_finish(c);
}

TEST(Dcuda, PutNotifyDataBeforeNotification) {
  NEED_GPU();
  const int ranks = 16, count = 1000;
  Session run(ring, 128, ranks);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  DeviceArray<int> out(ranks), window(ranks * count);
  Args a{out.p, window.p, count, 0};
  ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
  for (int bad : out.get()) EXPECT_EQ(bad, 0);
  auto w = window.get();
  for (int r = 0; r < ranks; ++r)
    for (int k = 0; k < count; ++k) ASSERT_EQ(w[r * count + k], ((r + ranks - 1) % ranks) * 100000 + k);
}

// Per-target order: rank 1 makes `count` rounds of a plain put of k into slot k and a notify;
// rank 0 checks on each notification that slot k holds k (the put arrived before the later
// notify). Sizes grow to 4 KiB so copies take different times.
__global__ void order(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  Args a = args_of(c);
  const int r = dcuda_comm_rank(c, DCUDA_COMM_WORLD);
  const int slot = 1024;  // ints per slot
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, a.window + (r == 0 ? 0 : a.count * slot), sizeof(int) * a.count * slot, &win);
  int* src = a.window + 2 * a.count * slot;  // rank 1's source
  if (r == 1) {
    for (int k = 0; k < a.count; ++k) {
      const int n = 1 + (k * 37) % slot;
      for (int i = threadIdx.x; i < n; i += blockDim.x) src[i] = k;
      __syncthreads();
      dcuda_put(c, win, 0, sizeof(int) * slot * k, sizeof(int) * n, src);
      dcuda_notify(c, 0, 3);
    }
  } else if (r == 0) {
    int bad = 0;
    for (int k = 0; k < a.count; ++k) {
      dcuda_wait_notifications(c, 3, 1);
      const int n = 1 + (k * 37) % slot;
      if (threadIdx.x == 0 && (a.window[slot * k] != k || a.window[slot * k + n - 1] != k)) ++bad;
    }
    if (threadIdx.x == 0) a.out[0] = bad;
  }
  dcuda_gpu_finish(c);
}

// Payloads of 1 to 16 bytes (the small-copy path) around a ring of ranks of a few threads: every
// byte arrives, none past the payload is touched.
__global__ void small_puts(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  Args a = args_of(c);
  const int r = dcuda_comm_rank(c, DCUDA_COMM_WORLD), n = dcuda_comm_size(c, DCUDA_COMM_WORLD);
  unsigned char* mine = reinterpret_cast<unsigned char*>(a.window) + 32 * r;
  dcuda_win win;
  if (dcuda_win_create(c, DCUDA_COMM_WORLD, mine, 32, &win) != DCUDA_SUCCESS) return;
  __shared__ unsigned char source[16];
  const int left = (r + n - 1) % n;
  int bad = 0;
  for (int k = 0; k < a.count; ++k) {
    const int len = 1 + k % 16;
    for (int i = threadIdx.x; i < 16; i += blockDim.x) source[i] = static_cast<unsigned char>(r * 31 + k + i);
    __syncthreads();
    dcuda_put_notify(c, win, (r + 1) % n, 8, len, source, 5);
    dcuda_wait_notifications(c, 5, 1);
    if (threadIdx.x == 0) {
      for (int i = 0; i < len; ++i) bad += mine[8 + i] != static_cast<unsigned char>(left * 31 + k + i);
      for (int i = 0; i < 8; ++i) bad += mine[i] != 0xee || mine[24 + i] != 0xee;  // untouched
    }
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);  // everyone checked before the next round writes
  }
  if (threadIdx.x == 0) a.out[r] = bad;
  dcuda_win_free(c, win);
  dcuda_gpu_finish(c);
}

TEST(Dcuda, SmallPayloadsFromRanksOfFewThreads) {
  NEED_GPU();
  for (int threads : {1, 8, 32}) {
    const int ranks = 6;
    Session run(small_puts, threads, ranks);
    ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
    DeviceArray<int> out(ranks), window(ranks * 8);
    cudaMemset(window.p, 0xee, sizeof(int) * window.n);
    Args a{out.p, window.p, 64, 0};
    ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
    for (int bad : out.get()) EXPECT_EQ(bad, 0) << threads << " threads per rank";
  }
}

TEST(Dcuda, PutThenNotifyKeepsOrder) {
  NEED_GPU();
  const int count = 200;
  Session run(order, 256, 4);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  DeviceArray<int> out(1), window(3 * count * 1024);
  cudaMemset(window.p, 0xff, sizeof(int) * window.n);
  Args a{out.p, window.p, count, 0};
  ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
  EXPECT_EQ(out.get()[0], 0);
}

// test consumes only when enough have arrived; counters wrap around 2^32 (set just below it).
__global__ void counting(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  Args a = args_of(c);
  const int r = dcuda_comm_rank(c, DCUDA_COMM_WORLD);
  const int tag = 200;
  if (threadIdx.x == 0 && a.arg) {  // white box: this rank's counters near the wrap
    p.device[r].device_notes[tag] = 0xfffffffeu;
    p.device[r].consumed_notes[tag] = 0xfffffffeu;
  }
  dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
  if (r == 1) {
    for (int i = 0; i < 2; ++i) dcuda_notify(c, 0, tag);
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
    for (int i = 0; i < 3; ++i) dcuda_notify(c, 0, tag);
  } else if (r == 0) {
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);  // two are there now
    int* o = a.out;
    const int short_test = dcuda_test_notifications(c, tag, 3);  // 0: not consumed
    const int exact = dcuda_test_notifications(c, tag, 2);       // 1
    const int none = dcuda_test_notifications(c, tag, 1);        // 0: the next three come after the barrier
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
    dcuda_wait_notifications(c, tag, 3);
    const int after = dcuda_test_notifications(c, tag, 1);  // 0
    const int other = dcuda_test_notifications(c, tag + 1, 1);
    const int bad_tag = dcuda_test_notifications(c, 256, 1);
    if (threadIdx.x == 0) o[0] = short_test, o[1] = exact, o[2] = none, o[3] = after, o[4] = other, o[5] = bad_tag;
  } else {
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
  }
  dcuda_gpu_finish(c);
}

TEST(Dcuda, TestConsumesOnlyWhenThereAndCountersWrap) {
  NEED_GPU();
  for (int wrap = 0; wrap < 2; ++wrap) {
    Session run(counting, 64, 3);
    ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
    DeviceArray<int> out(6);
    Args a{out.p, nullptr, 0, wrap};
    // The out-of-range tag is a rank's error, reported by the run.
    EXPECT_EQ(dcuda_host_run(run.ctx, &a, sizeof a), DCUDA_ERROR_ARGUMENT);
    auto v = out.get();
    EXPECT_EQ(v[0], 0) << "wrap " << wrap;
    EXPECT_EQ(v[1], 1);
    EXPECT_EQ(v[2], 0);
    EXPECT_EQ(v[3], 0);
    EXPECT_EQ(v[4], 0);
    EXPECT_EQ(v[5], DCUDA_ERROR_ARGUMENT);
  }
}

// Overlapping windows: every rank's window is the same array; a put whose source is the target
// address itself needs no copy and still notifies. Puts outside a window fail and touch nothing.
__global__ void overlap(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  Args a = args_of(c);
  const int r = dcuda_comm_rank(c, DCUDA_COMM_WORLD), n = dcuda_comm_size(c, DCUDA_COMM_WORLD);
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, a.window, sizeof(int) * n, &win);
  if (threadIdx.x == 0) a.window[r] = r + 1;
  __syncthreads();
  dcuda_put_notify(c, win, (r + 1) % n, sizeof(int) * r, sizeof(int), a.window + r, 9);
  dcuda_wait_notifications(c, 9, 1);
  const int outside = dcuda_put(c, win, (r + 1) % n, sizeof(int) * n, sizeof(int), a.window);
  const int straddle = dcuda_put(c, win, (r + 1) % n, sizeof(int) * (n - 1), 2 * sizeof(int), a.window);
  const int no_rank = dcuda_put(c, win, n, 0, sizeof(int), a.window);
  const int no_window = dcuda_put(c, win + 1, 0, 0, sizeof(int), a.window);
  if (threadIdx.x == 0) {
    a.out[4 * r] = outside, a.out[4 * r + 1] = straddle, a.out[4 * r + 2] = no_rank, a.out[4 * r + 3] = no_window;
  }
  dcuda_gpu_finish(c);
}

TEST(Dcuda, OverlappingWindowsAndBadPuts) {
  NEED_GPU();
  const int ranks = 8;
  Session run(overlap, 64, ranks);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  DeviceArray<int> out(4 * ranks), window(ranks + 4);
  Args a{out.p, window.p, 0, 0};
  EXPECT_EQ(dcuda_host_run(run.ctx, &a, sizeof a), DCUDA_ERROR_WINDOW);
  auto o = out.get();
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(o[4 * r], DCUDA_ERROR_WINDOW);
    EXPECT_EQ(o[4 * r + 1], DCUDA_ERROR_WINDOW);
    EXPECT_EQ(o[4 * r + 2], DCUDA_ERROR_RANK);
    EXPECT_EQ(o[4 * r + 3], DCUDA_ERROR_WINDOW);
  }
  auto w = window.get();
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(w[r], r + 1);
  for (int i = ranks; i < ranks + 4; ++i) EXPECT_EQ(w[i], 0);  // nothing written past the window
}

// Barriers: each rank sets its flag, waits at the barrier, then counts the flags it sees; many
// rounds, alternating the device and world barriers.
__global__ void barriers(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  Args a = args_of(c);
  const int r = dcuda_comm_rank(c, DCUDA_COMM_WORLD), n = dcuda_comm_size(c, DCUDA_COMM_WORLD);
  volatile int* flags = a.window;
  int bad = 0;
  for (int round = 1; round <= a.count; ++round) {
    if (threadIdx.x == 0) flags[r] = round;
    dcuda_comm_barrier(c, round % 2 ? DCUDA_COMM_DEVICE : DCUDA_COMM_WORLD);
    if (threadIdx.x == 0)
      for (int i = 0; i < n; ++i) bad += flags[i] < round;
    dcuda_comm_barrier(c, DCUDA_COMM_DEVICE);
  }
  if (threadIdx.x == 0) a.out[r] = bad;
  dcuda_gpu_finish(c);
}

TEST(Dcuda, BarriersWaitForEveryRank) {
  NEED_GPU();
  Session run(barriers, 128, 0);  // every resident block a rank
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  int ranks = 0;
  dcuda_host_get_rank_info(run.ctx, &ranks, nullptr, nullptr, nullptr, nullptr);
  ASSERT_GT(ranks, 1);
  DeviceArray<int> out(ranks), flags(ranks);
  Args a{out.p, flags.p, 50, 0};
  for (int again = 0; again < 2; ++again) {  // a second run continues the barriers' state
    ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
    for (int bad : out.get()) EXPECT_EQ(bad, 0);
    cudaMemset(flags.p, 0, sizeof(int) * ranks);
  }
}

TEST(Dcuda, GridThatCannotBeResidentIsRefused) {
  NEED_GPU();
  int per_sm = 0, device = 0;
  cudaDeviceProp prop{};
  cudaGetDevice(&device);
  cudaGetDeviceProperties(&prop, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(barriers), 1024, 0);
  Session run(barriers, 1024, per_sm * prop.multiProcessorCount + 1);
  EXPECT_EQ(run.rc, DCUDA_ERROR_LAUNCH);
  EXPECT_EQ(run.ctx, nullptr);
  Session bad_threads(barriers, 0, 1);
  EXPECT_EQ(bad_threads.rc, DCUDA_ERROR_ARGUMENT);
}

// A kernel that keeps 128 loaded values live at once: far more registers than 64 per thread, so not
// one block of 1024 threads fits on an SM.
__global__ void register_hungry(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  const float* in = static_cast<const float*>(dcuda_get_data(c));
  float v[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) v[i] = in[(threadIdx.x * 131 + i * 17) % 4096];
  float sum = 0;
#pragma unroll
  for (int i = 0; i < 128; ++i) sum = sum * v[127 - i] + v[i];
  if (sum == 12345.0f) dcuda_log(c, "unlikely", 0);
  dcuda_gpu_finish(c);
}

TEST(Dcuda, KernelWithNoRoomForOneRankIsRefusedWithWhy) {
  NEED_GPU();
  cudaFuncAttributes f{};
  ASSERT_EQ(cudaFuncGetAttributes(&f, reinterpret_cast<const void*>(register_hungry)), cudaSuccess);
  if (f.numRegs * 1024 <= 65536) GTEST_SKIP() << "the compiler kept register_hungry at " << f.numRegs << " registers";
  testing::internal::CaptureStderr();  // dcuda_host_init says why there
  Session run(register_hungry, 1024, 0);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(run.rc, DCUDA_ERROR_LAUNCH);
  EXPECT_EQ(run.ctx, nullptr);
  EXPECT_NE(said.find("registers per thread"), std::string::npos) << said;
  EXPECT_NE(said.find("__launch_bounds__(1024)"), std::string::npos) << said;
}

// Timers: stamps in order, one per phase.
__global__ void timed(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  dcuda_timer(c, 0);
  dcuda_comm_barrier(c, DCUDA_COMM_DEVICE);
  dcuda_timer(c, 1);
  dcuda_gpu_finish(c);
}

TEST(Dcuda, TimersStampEachRank) {
  NEED_GPU();
  Session run(timed, 32, 4);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  ASSERT_GE(dcuda_host_run(run.ctx, nullptr, 0), 0) << dcuda_host_error(run.ctx);
  std::vector<uint64_t> t(4 * DCUDA_MAX_TIMERS);
  ASSERT_EQ(dcuda_host_get_timings(run.ctx, t.data(), t.size()), DCUDA_SUCCESS);
  for (int r = 0; r < 4; ++r) {
    EXPECT_GT(t[r * DCUDA_MAX_TIMERS], 0u);
    EXPECT_GE(t[r * DCUDA_MAX_TIMERS + 1], t[r * DCUDA_MAX_TIMERS]);
    EXPECT_EQ(t[r * DCUDA_MAX_TIMERS + 2], 0u);
  }
  EXPECT_EQ(dcuda_host_get_timings(run.ctx, t.data(), 3), DCUDA_ERROR_ARGUMENT);
}

// The streaming log: every rank's lines, printed while the kernel runs; a rank that writes faster
// than the host prints loses lines (counted), never waits.
__global__ void logging(dcuda_params p) {
  dcuda_context c;
  dcuda_gpu_init(p, c);
  const int r = dcuda_comm_rank(c, DCUDA_COMM_WORLD);
  dcuda_log(c, "hello from rank", r);
  // Rank 0 waits until the host has printed its first line: the log streams during the run.
  if (r == 0 && threadIdx.x == 0)
    while (dcuda::detail::load_acquire(&p.host[0].log_printed) == 0) __nanosleep(1000);
  __syncthreads();
  if (r == 1)
    for (int i = 0; i < 100; ++i) dcuda_log(c, "burst", i);
  dcuda_gpu_finish(c);
}

TEST(Dcuda, LogStreamsWhileTheKernelRuns) {
  NEED_GPU();
  char path[] = "/tmp/dcuda-log-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  setenv("DCUDA_LOG", path, 1);
  {
    Session run(logging, 64, 4);
    unsetenv("DCUDA_LOG");
    ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
    ASSERT_GE(dcuda_host_run(run.ctx, nullptr, 0), 0) << dcuda_host_error(run.ctx);
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path);
  for (int r = 0; r < 4; ++r)
    EXPECT_NE(text.find("dcuda rank " + std::to_string(r) + " ["), std::string::npos) << text;
  for (int r = 0; r < 4; ++r) EXPECT_NE(text.find("]: hello from rank " + std::to_string(r) + "\n"), std::string::npos);
  EXPECT_NE(text.find("]: burst 0\n"), std::string::npos) << text;
  // 100 lines into 16 slots faster than a 200 us printer: some are dropped, and said to be.
  size_t bursts = 0;
  for (size_t at = 0; (at = text.find("]: burst ", at)) != std::string::npos; ++at) ++bursts;
  if (bursts < 100) EXPECT_NE(text.find("dcuda rank 1: " + std::to_string(100 - bursts) + " log lines dropped"), std::string::npos) << text;
}

}  // namespace
