// A dcuda program written from the reference dCUDA interface alone (shared/seeds/001, Listings
// 3.3-3.5), as its users write them: it must compile unchanged against Outboard's dcuda (CI
// builds it) and run (tests/gpu/dcuda runs it). Nothing here is Outboard's own.
//
// Every rank creates a window over the world, then, `rounds` times, put_notifies its round
// number into its right neighbour's window and waits for its left neighbour's; every rank also
// notifies rank 0 over the device communicator once, and rank 0 of each device tests for those
// notifications until all have come. Timed with the CPU timers. The host checks what each rank
// received (copied back with the user data) and prints one line.
//
//   reference_ring [rounds]            exit 0: every value as expected; 1: not; 2: dcuda failed
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

using namespace std;

struct RingData {
  int* inbox;     // per world rank, `rounds` ints (device memory)
  int* checked;   // per world rank: 1 once it received all it expected (device memory)
  int rounds;
};

__global__ void ring(dcuda_context_handle handle) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(handle, gst);

  void* data;
  dcuda_get_data(gst, &data);
  RingData* d = (RingData*)data;
  int rank, size, device_rank, device_size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &device_size);

  int* mine = d->inbox + rank * d->rounds;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, mine, d->rounds * (int)sizeof(int), &win);
  if (win == DCUDA_WIN_NONE) return;

  __shared__ int value;
  const int right = (rank + 1) % size;
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_start_cpu_timer(gst);
  for (int k = 0; k < d->rounds; ++k) {
    if (threadIdx.x == 0) value = rank * 1000 + k;
    __syncthreads();
    dcuda_put_notify(gst, win, right, k * (int)sizeof(int), (int)sizeof(int), &value, 1);
    dcuda_wait_notifications(gst, 1, 1);
    dcuda_win_flush(gst, win);  // `value` is rewritten next round
  }
  dcuda_stop_cpu_timer(gst);

  // Every rank of the device tells the device's rank 0; it tests until all have.
  dcuda_notify(gst, 0, DCUDA_COMM_DEVICE, 2);
  if (device_rank == 0)
    while (!dcuda_test_notifications(gst, 2, device_size)) {
    }

  const int left = (rank + size - 1) % size;
  int ok = 1;
  for (int k = 0; k < d->rounds; ++k) ok &= mine[k] == left * 1000 + k;
  if (threadIdx.x == 0) d->checked[rank] = ok;
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

int main(int argc, char* argv[]) {
  dcuda_host_context_handle ctx;
  dcuda_host_init(argc, argv, &ctx, ring, 128);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(ctx, &info);
  if (info.rank_count == 0) return 2;

  RingData d;
  d.rounds = argc > 1 ? atoi(argv[1]) : 100;
  cudaMalloc(&d.inbox, sizeof(int) * d.rounds * info.rank_count);
  cudaMalloc(&d.checked, sizeof(int) * info.rank_count);
  cudaMemset(d.checked, 0, sizeof(int) * info.rank_count);
  double ms = dcuda_host_run(ctx, &d, sizeof d);
  if (ms < 0) return 2;

  vector<int> checked(info.rank_count);
  cudaMemcpy(checked.data(), d.checked, sizeof(int) * info.rank_count, cudaMemcpyDeviceToHost);
  int good = 0;
  for (int r = info.rank_start; r < info.rank_start + info.rank_responsible; ++r) good += checked[r];
  vector<double> timings = dcuda_host_get_timings(ctx);
  printf("reference_ring: process %d of %d (node %d of %d, device %d of %d): ranks %d..%d of %d, %d rounds, "
         "%d of %d ranks received all, kernel %.3f ms, CPU timer %.3f ms\n",
         info.process_index, info.process_count, info.node_index, info.node_count, info.device_index,
         info.device_count, info.rank_start, info.rank_start + info.rank_responsible - 1, info.rank_count, d.rounds,
         good, info.rank_responsible, ms, timings.empty() ? -1.0 : timings.back());
  cudaFree(d.inbox);
  cudaFree(d.checked);
  dcuda_host_finish(ctx);
  return good == info.rank_responsible && timings.size() == 1 ? 0 : 1;
}
