/* dcuda: every thread block of a kernel is a rank; ranks put data into each other's memory
 * windows and notify each other from inside the running kernel — on one GPU, between the GPUs
 * (processes) of a host and across hosts. This header is the host side; dcuda_device.cuh the
 * device side (include it in the .cu file that defines the kernel). The interface is the
 * reference dCUDA's (shared/seeds/001, Listings 3.3-3.5), signature for signature:
 *
 *   __global__ void step(dcuda_context_handle handle) {
 *     __shared__ dcuda_state gst;
 *     dcuda_gpu_init(handle, gst);
 *     ...
 *     dcuda_gpu_finish(gst);
 *   }
 *   int main(int argc, char* argv[]) {
 *     dcuda_host_context_handle ctx;
 *     dcuda_host_init(argc, argv, &ctx, step, 256);
 *     double ms = dcuda_host_run(ctx, &args, sizeof args);   // one cooperative launch
 *     dcuda_host_finish(ctx);
 *   }
 *
 * One process per GPU; ranks are all blocks of a cooperative launch, as many as can be resident
 * at once (DCUDA_RANKS_PER_GPU asks for fewer; more is refused). World ranks are numbered
 * process by process. Processes find each other through mpirun/srun's environment or
 * `outboard dcuda run -n N`; see docs/dcuda.md.
 *
 * Additions, which change no reference signature: the DCUDA_ERROR_* codes, dcuda_host_status and
 * dcuda_host_error (the reference's host calls return nothing: a failure is also printed on
 * stderr, and dcuda_host_run then returns the negative code), the GPU-clock timers
 * (dcuda_gpu_timer, dcuda_host_get_gpu_timings) and, on the device, dcuda_last_error and the
 * streaming log dcuda_log. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "dcuda/detail/layout.hpp"

typedef struct dcuda_host_context* dcuda_host_context_handle;
typedef struct dcuda_context* dcuda_context_handle;
typedef void (*dcuda_kernel_t)(dcuda_context_handle);

struct dcuda_rank_info {
  int rank_count;        ///< total number of ranks
  int rank_responsible;  ///< number of ranks I own
  int rank_start;        ///< index of first rank I own
  int device_count;      ///< number of active devices on this compute node
  int device_index;      ///< my device index on the node
  int node_count;        ///< number of compute nodes
  int node_index;        ///< index of my node
  int process_count;     ///< number of host processes
  int process_index;     ///< index of my process
};

/* Return codes: dcuda_host_status, dcuda_host_run's negative values, dcuda_last_error. */
enum {
  DCUDA_SUCCESS = 0,
  DCUDA_ERROR_ARGUMENT = -1,    /* a bad argument (tag out of 0..255, null pointer, unknown comm, negative size) */
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

/* Picks this process's GPU (its local rank among the processes of the host), sizes the grid for
 * `kernel` at `threads_per_rank` threads per block, allocates the shared state, and joins the
 * other processes. argc/argv are read by no one today. On failure *ctx is still a context, in
 * the failed state (dcuda_host_status, dcuda_host_error; runs fail), and the error is printed. */
void dcuda_host_init(int argc, char* argv[], dcuda_host_context_handle* ctx, dcuda_kernel_t kernel,
                     int threads_per_rank);
/* The launch configuration: ranks, devices and nodes, processes (all zero for a failed context). */
void dcuda_host_get_rank_info(dcuda_host_context_handle ctx, dcuda_rank_info* rank_info);
/* One cooperative launch of the kernel over every rank. `gpu_data` (gpu_size bytes) is copied to
 * device memory first (dcuda_get_data) and back to the same host memory after the kernel (after
 * a successful run only: a failed one leaves the host's copy as it was).
 * Returns the kernel's time in milliseconds, or, when it or a rank's dcuda call failed, a
 * negative DCUDA_ERROR_* code (printed, and kept for dcuda_host_error). */
double dcuda_host_run(dcuda_host_context_handle ctx, void* gpu_data = NULL, size_t gpu_size = 0);
/* The CPU timers (dcuda_start_cpu_timer / dcuda_stop_cpu_timer): every start-stop interval
 * measured so far, in milliseconds of the host's steady clock, in order. */
std::vector<double> dcuda_host_get_timings(dcuda_host_context_handle ctx);
/* Leaves the run (a barrier with the other processes) and frees everything. */
void dcuda_host_finish(dcuda_host_context_handle ctx);

/* Additions. */
/* DCUDA_SUCCESS, or the code of the last failure (of init or of the last run). */
int dcuda_host_status(dcuda_host_context_handle ctx);
/* The last failure's description ("" when none). */
const char* dcuda_host_error(dcuda_host_context_handle ctx);
/* dcuda_host_finish, saying how it went: DCUDA_ERROR_REMOTE when the host proxy failed while the
 * processes finished (a peer lost before it was done), else DCUDA_SUCCESS. */
int dcuda_host_finish_status(dcuda_host_context_handle ctx);
/* The GPU-clock timers of the last run (dcuda_gpu_timer): DCUDA_MAX_TIMERS nanosecond stamps per
 * local rank, rank after rank, into `out` (room for rank_responsible * DCUDA_MAX_TIMERS). */
int dcuda_host_get_gpu_timings(dcuda_host_context_handle ctx, uint64_t* out, size_t count);
