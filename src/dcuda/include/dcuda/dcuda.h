/* dcuda: every thread block of a kernel is a rank; ranks put data into each other's memory
 * windows and notify each other from inside the running kernel — on one GPU, between the GPUs
 * (processes) of a host and across hosts. This header is the host side; dcuda_device.cuh the
 * device side (include it in the .cu file that defines the kernel).
 *
 *   __global__ void step(dcuda_params p) { dcuda_context c; dcuda_gpu_init(p, c); ... dcuda_gpu_finish(c); }
 *   int main(int argc, char** argv) {
 *     dcuda_host_context ctx;
 *     if (dcuda_host_init(&argc, &argv, &ctx, step, 256) != DCUDA_SUCCESS) ...;
 *     double ms = dcuda_host_run(ctx, &args, sizeof args);   // one cooperative launch
 *     dcuda_host_finish(ctx);
 *   }
 *
 * One process per GPU; ranks are all blocks of a cooperative launch, as many as can be resident
 * at once (DCUDA_RANKS_PER_GPU asks for fewer; more is refused). World ranks are numbered
 * process by process. Processes find each other through mpirun/srun's environment or
 * `outboard dcuda run -n N`; see the README. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "dcuda/detail/layout.hpp"

typedef dcuda::detail::Params dcuda_params;
typedef struct dcuda_host_context_s* dcuda_host_context;
typedef void (*dcuda_kernel)(dcuda_params);

/* Return codes: of the host calls, and of the device calls (dcuda_device.cuh). */
enum {
  DCUDA_SUCCESS = 0,
  DCUDA_ERROR_ARGUMENT = -1,    /* a bad argument (tag out of 0..255, null pointer, unknown comm) */
  DCUDA_ERROR_RANK = -2,        /* a target rank outside the communicator */
  DCUDA_ERROR_WINDOW = -3,      /* no such window at the target, or the put leaves it */
  DCUDA_ERROR_TOO_MANY = -4,    /* more windows than DCUDA_MAX_WINDOWS held at once */
  DCUDA_ERROR_CUDA = -5,        /* a CUDA call failed (dcuda_host_error says which) */
  DCUDA_ERROR_LAUNCH = -6,      /* the grid cannot be resident at once, or the device cannot launch cooperatively */
  DCUDA_ERROR_BOOTSTRAP = -7,   /* processes could not find each other */
  DCUDA_ERROR_REMOTE = -8,      /* the host proxy failed (a peer lost, a put refused) */
  DCUDA_ERROR_UNSUPPORTED = -9, /* a path this build or machine does not offer */
};

#define DCUDA_MAX_WINDOWS 32
#define DCUDA_MAX_TIMERS 16

#ifdef __cplusplus
extern "C" {
#endif

/* Picks this process's GPU (its local rank among the processes of the host), sizes the grid for
 * `kernel` at `threads_per_rank` threads per block, allocates the shared state, and joins the
 * other processes. argc/argv are not changed today (kept for the reference interface). */
int dcuda_host_init(int* argc, char*** argv, dcuda_host_context* ctx, dcuda_kernel kernel, int threads_per_rank);
/* Who this process is: world size, its first world rank and its ranks, its index and the
 * number of processes. Any pointer may be null. */
int dcuda_host_get_rank_info(dcuda_host_context ctx, int* world_size, int* first_rank, int* ranks_here, int* process,
                             int* processes);
/* One cooperative launch of the kernel over every rank; `data` (size bytes, may be 0) is copied
 * to device memory first, for dcuda_get_data. Returns the kernel's time in milliseconds, or a
 * negative value (a DCUDA_ERROR_* code) when it or a rank's dcuda call failed. */
double dcuda_host_run(dcuda_host_context ctx, const void* data, size_t size);
/* The device timers of the last run (dcuda_timer): DCUDA_MAX_TIMERS nanosecond stamps per local
 * rank, rank after rank, into `out` (room for ranks_here * DCUDA_MAX_TIMERS). */
int dcuda_host_get_timings(dcuda_host_context ctx, uint64_t* out, size_t count);
/* The last error's description ("" when none). */
const char* dcuda_host_error(dcuda_host_context ctx);
/* Leaves the run (a barrier with the other processes) and frees everything. */
int dcuda_host_finish(dcuda_host_context ctx);

#ifdef __cplusplus
}
#endif
