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

// A context for `kernel` with `ranks` ranks (DCUDA_RANKS_PER_GPU), freed at scope exit (a failed
// one too: dcuda_host_init leaves a context in the failed state). rc: dcuda_host_status after init.
struct Session {
  dcuda_host_context_handle ctx = nullptr;
  int rc;
  Session(dcuda_kernel_t kernel, int threads, int ranks) {
    if (ranks > 0) setenv("DCUDA_RANKS_PER_GPU", std::to_string(ranks).c_str(), 1);
    dcuda_host_init(0, nullptr, &ctx, kernel, threads);
    rc = dcuda_host_status(ctx);
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

constexpr int kInt = static_cast<int>(sizeof(int));  // puts' offsets and sizes are ints

__device__ Args args_of(dcuda_state& c) {
  void* data;
  dcuda_get_data(c, &data);
  return *static_cast<Args*>(data);
}
__device__ int world_rank(dcuda_state& c) {
  int r;
  dcuda_comm_rank(c, DCUDA_COMM_WORLD, &r);
  return r;
}
__device__ int world_size(dcuda_state& c) {
  int n;
  dcuda_comm_size(c, DCUDA_COMM_WORLD, &n);
  return n;
}

// Each rank records its world rank and the device's size.
__global__ void who(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c);
  int device_size;
  dcuda_comm_size(c, DCUDA_COMM_DEVICE, &device_size);
  if (threadIdx.x == 0) a.out[2 * r] = r, a.out[2 * r + 1] = device_size;
  dcuda_gpu_finish(c);
}

TEST(Dcuda, RanksAreBlocks) {
  NEED_GPU();
  Session run(who, 128, 8);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(run.ctx, &info);
  EXPECT_EQ(info.rank_count, 8);
  EXPECT_EQ(info.rank_responsible, 8);
  EXPECT_EQ(info.process_count, 1);
  DeviceArray<int> out(16);
  Args a{out.p, nullptr, 0, 0};
  ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
  auto v = out.get();
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(v[2 * r], r);
    EXPECT_EQ(v[2 * r + 1], 8);
  }
}

// One process: it is responsible for every rank, from 0, on the one device of the one node.
TEST(Dcuda, RankInfoOfOneProcess) {
  NEED_GPU();
  Session run(who, 64, 0);  // every resident block a rank
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(run.ctx, &info);
  EXPECT_GT(info.rank_count, 0);
  EXPECT_EQ(info.rank_count, info.rank_responsible);
  EXPECT_EQ(info.rank_start, 0);
  EXPECT_EQ(info.process_count, 1);
  EXPECT_EQ(info.process_index, 0);
  EXPECT_EQ(info.node_count, 1);
  EXPECT_EQ(info.node_index, 0);
  EXPECT_EQ(info.device_count, 1);
  EXPECT_EQ(info.device_index, 0);
}

// The user data is copied back after the run: rank 0 doubles `value` (plus one), every rank adds
// its rank + 1 to `sum`; `untouched` stays.
struct Tally {
  int value;
  int sum;
  int untouched;
};

__global__ void tally(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  void* data;
  dcuda_get_data(c, &data);
  Tally* t = static_cast<Tally*>(data);
  const int r = world_rank(c);
  if (threadIdx.x == 0) {
    atomicAdd(&t->sum, r + 1);
    if (r == 0) t->value = 2 * t->value + 1;
  }
  dcuda_gpu_finish(c);
}

TEST(Dcuda, RunCopiesTheDataBack) {
  NEED_GPU();
  const int ranks = 4;
  Session run(tally, 32, ranks);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  Tally t{20, 0, 7};
  ASSERT_GE(dcuda_host_run(run.ctx, &t, sizeof t), 0) << dcuda_host_error(run.ctx);
  EXPECT_EQ(t.value, 41);
  EXPECT_EQ(t.sum, ranks * (ranks + 1) / 2);
  EXPECT_EQ(t.untouched, 7);
  // The next run starts from what the last one left.
  ASSERT_GE(dcuda_host_run(run.ctx, &t, sizeof t), 0) << dcuda_host_error(run.ctx);
  EXPECT_EQ(t.value, 83);
  EXPECT_EQ(t.sum, ranks * (ranks + 1));
  EXPECT_EQ(t.untouched, 7);
}

// A ring: every rank puts its rank into its right neighbour's window at slot `count` times,
// notifying each time; the receiver checks, on each notification, that the data is already there.
__global__ void ring(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c), n = world_size(c);
  int* mine = a.window + r * a.count;
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, mine, kInt * a.count, &win);
  if (win == DCUDA_WIN_NONE) return;
  __shared__ int value[1];
  int bad = 0;
  for (int k = 0; k < a.count; ++k) {
    if (threadIdx.x == 0) value[0] = r * 100000 + k;
    __syncthreads();
    dcuda_put_notify(c, win, (r + 1) % n, kInt * k, kInt, value, 7);
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
__global__ void order(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c);
  const int slot = 1024;  // ints per slot
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, a.window + (r == 0 ? 0 : a.count * slot), kInt * a.count * slot, &win);
  int* src = a.window + 2 * a.count * slot;  // rank 1's source
  if (r == 1) {
    for (int k = 0; k < a.count; ++k) {
      const int n = 1 + (k * 37) % slot;
      for (int i = threadIdx.x; i < n; i += blockDim.x) src[i] = k;
      __syncthreads();
      dcuda_put(c, win, 0, kInt * slot * k, kInt * n, src);
      dcuda_notify(c, 0, DCUDA_COMM_WORLD, 3);
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
__global__ void small_puts(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c), n = world_size(c);
  unsigned char* mine = reinterpret_cast<unsigned char*>(a.window) + 32 * r;
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, mine, 32, &win);
  if (win == DCUDA_WIN_NONE) return;
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
__global__ void counting(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c);
  const int tag = 200;
  if (threadIdx.x == 0 && a.arg) {  // white box: this rank's counters near the wrap
    c.p.device[r].device_notes[tag] = 0xfffffffeu;
    c.p.device[r].consumed_notes[tag] = 0xfffffffeu;
  }
  dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
  if (r == 1) {
    for (int i = 0; i < 2; ++i) dcuda_notify(c, 0, DCUDA_COMM_WORLD, tag);
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
    dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
    for (int i = 0; i < 3; ++i) dcuda_notify(c, 0, DCUDA_COMM_WORLD, tag);
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
    const int before = dcuda_last_error(c);                // DCUDA_SUCCESS: no error yet
    const int bad_tag = dcuda_test_notifications(c, 256, 1);  // 0, and the rank's (first) error
    const int error = dcuda_last_error(c);
    if (threadIdx.x == 0) o[0] = short_test, o[1] = exact, o[2] = none, o[3] = after, o[4] = other, o[5] = error;
    if (threadIdx.x == 0) o[6] = bad_tag, o[7] = before;
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
    DeviceArray<int> out(8);
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
    EXPECT_EQ(v[6], 0);
    EXPECT_EQ(v[7], DCUDA_SUCCESS);
  }
}

// Overlapping windows: every rank's window is the same array; a put whose source is the target
// address itself needs no copy and still notifies. Puts outside a window fail and touch nothing.
// A rank's error is its first one, so each rank makes one of the four bad puts (by rank % 4) and
// records dcuda_last_error before (none) and after it.
__global__ void overlap(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c), n = world_size(c);
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_WORLD, a.window, kInt * n, &win);
  if (threadIdx.x == 0) a.window[r] = r + 1;
  __syncthreads();
  dcuda_put_notify(c, win, (r + 1) % n, kInt * r, kInt, a.window + r, 9);
  dcuda_wait_notifications(c, 9, 1);
  const int before = dcuda_last_error(c);
  switch (r % 4) {  // the same for every thread of the rank
    case 0: dcuda_put(c, win, (r + 1) % n, kInt * n, kInt, a.window); break;             // outside
    case 1: dcuda_put(c, win, (r + 1) % n, kInt * (n - 1), 2 * kInt, a.window); break;   // straddling the end
    case 2: dcuda_put(c, win, n, 0, kInt, a.window); break;                              // no such rank
    default: dcuda_put(c, win + 1, 0, 0, kInt, a.window); break;                         // no such window
  }
  const int after = dcuda_last_error(c);
  if (threadIdx.x == 0) a.out[2 * r] = before, a.out[2 * r + 1] = after;
  dcuda_gpu_finish(c);
}

TEST(Dcuda, OverlappingWindowsAndBadPuts) {
  NEED_GPU();
  const int ranks = 8;
  Session run(overlap, 64, ranks);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  DeviceArray<int> out(2 * ranks), window(ranks + 4);
  Args a{out.p, window.p, 0, 0};
  EXPECT_EQ(dcuda_host_run(run.ctx, &a, sizeof a), DCUDA_ERROR_WINDOW);  // rank 0's, outside the window
  auto o = out.get();
  // outside, straddling, no such rank, no such window
  const int expected[4] = {DCUDA_ERROR_WINDOW, DCUDA_ERROR_WINDOW, DCUDA_ERROR_RANK, DCUDA_ERROR_WINDOW};
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(o[2 * r], DCUDA_SUCCESS) << "rank " << r;
    EXPECT_EQ(o[2 * r + 1], expected[r % 4]) << "rank " << r;
  }
  auto w = window.get();
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(w[r], r + 1);
  for (int i = ranks; i < ranks + 4; ++i) EXPECT_EQ(w[i], 0);  // nothing written past the window
}

// A window over DCUDA_COMM_DEVICE: puts address the target by its device rank (the block index),
// and so does dcuda_notify with DCUDA_COMM_DEVICE. Every rank put_notifies its world rank into
// slot 0 of its right neighbour's window (by device rank), puts its device rank into slot 1 and
// notifies the same neighbour over the device communicator; then every rank notifies device rank
// 0. After a world barrier (every put and notify in place) the ranks test what they got, so a
// notification sent astray shows as a count, not as a hang. out[device rank]: failed checks.
// (One process: device and world ranks coincide here; dcuda_proxy_gpu_check's processes are
// where they differ.)
__global__ void device_window(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c);
  int dr, m;
  dcuda_comm_rank(c, DCUDA_COMM_DEVICE, &dr);
  dcuda_comm_size(c, DCUDA_COMM_DEVICE, &m);
  int* mine = a.window + 2 * dr;
  dcuda_win win;
  dcuda_win_create(c, DCUDA_COMM_DEVICE, mine, 2 * kInt, &win);
  if (win == DCUDA_WIN_NONE) return;
  __shared__ int value[2];
  if (threadIdx.x == 0) value[0] = 100 + r, value[1] = 200 + dr;
  __syncthreads();
  const int right = (dr + 1) % m;
  dcuda_put_notify(c, win, right, 0, kInt, value, 4);
  dcuda_put(c, win, right, kInt, kInt, value + 1);
  dcuda_notify(c, right, DCUDA_COMM_DEVICE, 4);
  dcuda_notify(c, 0, DCUDA_COMM_DEVICE, 6);
  dcuda_comm_barrier(c, DCUDA_COMM_WORLD);
  const int left = (dr + m - 1) % m, first = r - dr;  // the world rank of device rank 0
  int bad = 0;
  bad += dcuda_test_notifications(c, 4, 2) != 1;
  bad += dcuda_test_notifications(c, 4, 1) != 0;  // no more than the left neighbour's two
  if (dr == 0) bad += dcuda_test_notifications(c, 6, m) != 1;
  bad += dcuda_test_notifications(c, 6, 1) != 0;  // none to another rank than device rank 0
  if (threadIdx.x == 0) {
    bad += mine[0] != 100 + first + left;
    bad += mine[1] != 200 + left;
    bad += dcuda_last_error(c) != DCUDA_SUCCESS;
    a.out[dr] = bad;
  }
  dcuda_comm_barrier(c, DCUDA_COMM_WORLD);  // all have read their windows
  dcuda_win_free(c, win);
  dcuda_gpu_finish(c);
}

TEST(Dcuda, DeviceWindowAndNotifyAddressDeviceRanks) {
  NEED_GPU();
  const int ranks = 6;
  Session run(device_window, 64, ranks);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  DeviceArray<int> out(ranks), window(2 * ranks);
  cudaMemset(out.p, 0xff, sizeof(int) * out.n);  // a rank that records nothing fails
  Args a{out.p, window.p, 0, 0};
  ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
  auto o = out.get();
  for (int d = 0; d < ranks; ++d) EXPECT_EQ(o[d], 0) << "device rank " << d;
  auto w = window.get();
  for (int d = 0; d < ranks; ++d) {
    const int left = (d + ranks - 1) % ranks;
    EXPECT_EQ(w[2 * d], 100 + left) << "device rank " << d;  // one process: world rank = device rank
    EXPECT_EQ(w[2 * d + 1], 200 + left) << "device rank " << d;
  }
}

// A window of negative size is refused: DCUDA_WIN_NONE and DCUDA_ERROR_ARGUMENT in the ranks that
// asked for one (the odd ones); the others' windows are made. out[3 * rank ...]: the error before,
// the error after, whether the window is DCUDA_WIN_NONE.
__global__ void negative_window(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c);
  const int before = dcuda_last_error(c);
  dcuda_win win = 0;
  dcuda_win_create(c, DCUDA_COMM_WORLD, a.window + 4 * r, r % 2 ? -4 : 4 * kInt, &win);
  const int after = dcuda_last_error(c);
  if (threadIdx.x == 0) a.out[3 * r] = before, a.out[3 * r + 1] = after, a.out[3 * r + 2] = win == DCUDA_WIN_NONE;
  dcuda_gpu_finish(c);  // no dcuda_win_free: it is collective, and the odd ranks have no window
}

TEST(Dcuda, WindowOfNegativeSizeIsRefused) {
  NEED_GPU();
  const int ranks = 4;
  Session run(negative_window, 64, ranks);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  DeviceArray<int> out(3 * ranks), window(4 * ranks);
  cudaMemset(out.p, 0xff, sizeof(int) * out.n);
  Args a{out.p, window.p, 0, 0};
  EXPECT_EQ(dcuda_host_run(run.ctx, &a, sizeof a), DCUDA_ERROR_ARGUMENT);  // rank 1's
  auto o = out.get();
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(o[3 * r], DCUDA_SUCCESS) << "rank " << r;
    EXPECT_EQ(o[3 * r + 1], r % 2 ? DCUDA_ERROR_ARGUMENT : DCUDA_SUCCESS) << "rank " << r;
    EXPECT_EQ(o[3 * r + 2], r % 2 ? 1 : 0) << "rank " << r;
  }
}

// Barriers: each rank sets its flag, waits at the barrier, then counts the flags it sees; many
// rounds, alternating the device and world barriers.
__global__ void barriers(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  const int r = world_rank(c), n = world_size(c);
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
  dcuda_rank_info info;
  dcuda_host_get_rank_info(run.ctx, &info);
  const int ranks = info.rank_count;
  ASSERT_GT(ranks, 1);
  DeviceArray<int> out(ranks), flags(ranks);
  Args a{out.p, flags.p, 50, 0};
  for (int again = 0; again < 2; ++again) {  // a second run continues the barriers' state
    ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
    for (int bad : out.get()) EXPECT_EQ(bad, 0);
    cudaMemset(flags.p, 0, sizeof(int) * ranks);
  }
}

// A context whose init failed: still a context (to finish), with no ranks, and runs fail.
void expect_failed_context(dcuda_host_context_handle ctx) {
  ASSERT_NE(ctx, nullptr);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(ctx, &info);
  EXPECT_EQ(info.rank_count, 0);
  EXPECT_EQ(info.rank_responsible, 0);
  EXPECT_LT(dcuda_host_run(ctx), 0);
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
  expect_failed_context(run.ctx);
  Session bad_threads(barriers, 0, 1);
  EXPECT_EQ(bad_threads.rc, DCUDA_ERROR_ARGUMENT);
  expect_failed_context(bad_threads.ctx);
}

// A kernel that keeps 128 loaded values live at once: far more registers than 64 per thread, so not
// one block of 1024 threads fits on an SM.
__global__ void register_hungry(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  void* data;
  dcuda_get_data(c, &data);
  const float* in = static_cast<const float*>(data);
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
  expect_failed_context(run.ctx);
  EXPECT_NE(said.find("registers per thread"), std::string::npos) << said;
  EXPECT_NE(said.find("__launch_bounds__(1024)"), std::string::npos) << said;
}

// GPU-clock timers: stamps in order, one per phase.
__global__ void timed(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  dcuda_gpu_timer(c, 0);
  dcuda_comm_barrier(c, DCUDA_COMM_DEVICE);
  dcuda_gpu_timer(c, 1);
  dcuda_gpu_finish(c);
}

TEST(Dcuda, TimersStampEachRank) {
  NEED_GPU();
  Session run(timed, 32, 4);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  ASSERT_GE(dcuda_host_run(run.ctx, nullptr, 0), 0) << dcuda_host_error(run.ctx);
  std::vector<uint64_t> t(4 * DCUDA_MAX_TIMERS);
  ASSERT_EQ(dcuda_host_get_gpu_timings(run.ctx, t.data(), t.size()), DCUDA_SUCCESS);
  for (int r = 0; r < 4; ++r) {
    EXPECT_GT(t[r * DCUDA_MAX_TIMERS], 0u);
    EXPECT_GE(t[r * DCUDA_MAX_TIMERS + 1], t[r * DCUDA_MAX_TIMERS]);
    EXPECT_EQ(t[r * DCUDA_MAX_TIMERS + 2], 0u);
  }
  EXPECT_EQ(dcuda_host_get_gpu_timings(run.ctx, t.data(), 3), DCUDA_ERROR_ARGUMENT);
}

// CPU timers: `count` times, the device's ranks start a timer, every rank waits a.arg microseconds
// of the GPU's global timer, and they stop it; the host has one interval per stop, each at least
// about the wait (less only by a poll's latency).
__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void cpu_timed(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  Args a = args_of(c);
  for (int k = 0; k < a.count; ++k) {
    dcuda_start_cpu_timer(c);
    if (threadIdx.x == 0) {
      const uint64_t from = global_ns();
      while (global_ns() - from < 1000ull * a.arg) {
      }
    }
    __syncthreads();
    dcuda_stop_cpu_timer(c);
  }
  dcuda_gpu_finish(c);
}

TEST(Dcuda, CpuTimersMeasureEachStartToStop) {
  NEED_GPU();
  Session run(cpu_timed, 64, 8);
  ASSERT_EQ(run.rc, DCUDA_SUCCESS) << dcuda_host_error(run.ctx);
  Args a{nullptr, nullptr, 3, 2000};  // 3 intervals of 2 ms
  ASSERT_GE(dcuda_host_run(run.ctx, &a, sizeof a), 0) << dcuda_host_error(run.ctx);
  const std::vector<double> t = dcuda_host_get_timings(run.ctx);
  ASSERT_EQ(t.size(), 3u);
  for (double ms : t) {
    EXPECT_GE(ms, 1.5);
    EXPECT_LT(ms, 1000.0);
  }
}

// The streaming log: every rank's lines, printed while the kernel runs; a rank that writes faster
// than the host prints loses lines (counted), never waits.
__global__ void logging(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  const int r = world_rank(c);
  dcuda_log(c, "hello from rank", r);
  // Rank 0 waits until the host has printed its first line: the log streams during the run.
  if (r == 0 && threadIdx.x == 0)
    while (dcuda::detail::load_acquire(&c.p.host[0].log_printed) == 0) __nanosleep(1000);
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
