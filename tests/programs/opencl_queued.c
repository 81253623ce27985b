/* An ordinary OpenCL program (linked with -lOpenCL only) that queues large transfers without
   waiting: 64 non-blocking writes of 8 MiB, kernels and non-blocking reads behind them on an
   in-order queue, transfers and kernels interleaved, a transfer on a second queue held back by a
   user event while the first queue's transfers go on, maps for reading (blocking and not) and for
   writing, and profiling of a transfer's event. Each check prints one line, so runs on PoCL
   directly and through Outboard compare line for line; the last line is
   "opencl_queued: N passed, M failed".
     opencl_queued            the checks
     opencl_queued inflight   queues 64 transfers of 8 MiB each way, prints "queued", sleeps (a
                              test kills it with its transfers in flight) */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opencl_bytes.h"

/* Whether p[0, n) holds the pattern from `first` on, plus `add`; prints where it does not. */
static int holds(const uint8_t* p, size_t n, size_t first, unsigned seed, uint8_t add) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != (uint8_t)(pattern(first + i, seed) + add)) {
      printf("  byte %zu is %u, not %u\n", i, p[i], (uint8_t)(pattern(first + i, seed) + add));
      return 0;
    }
  return 1;
}

#define MiB ((size_t)1 << 20)
enum { kCount = 64 };
static const size_t kPiece = 8 * MiB;

static cl_context ctx;
static cl_device_id device;
static cl_kernel inc;

/* Adds 1 to bytes [offset, offset + n) of `buf`. */
static cl_int add_one(cl_command_queue q, cl_mem buf, size_t offset, size_t n, cl_uint waits, const cl_event* wait,
                      cl_event* done) {
  clSetKernelArg(inc, 0, sizeof buf, &buf);
  return clEnqueueNDRangeKernel(q, inc, 1, &offset, &n, NULL, waits, wait, done);
}

static uint8_t* host[kCount];
static uint8_t* back[kCount];

/* 64 non-blocking writes of 8 MiB into one buffer, a kernel behind each, non-blocking reads of
   each piece into other memory, then clFinish. */
static void queued_writes(cl_command_queue q, cl_mem big, int with_checks) {
  cl_int rc = CL_SUCCESS;
  for (int i = 0; i < kCount; ++i) {
    rc |= clEnqueueWriteBuffer(q, big, CL_FALSE, i * kPiece, kPiece, host[i], 0, NULL, NULL);
    rc |= add_one(q, big, i * kPiece, kPiece, 0, NULL, NULL);
  }
  for (int i = 0; i < kCount; ++i) rc |= clEnqueueReadBuffer(q, big, CL_FALSE, i * kPiece, kPiece, back[i], 0, NULL, NULL);
  if (!with_checks) return;
  check(rc == CL_SUCCESS, "64 non-blocking writes, kernels and reads queued");
  check(clFinish(q) == CL_SUCCESS, "finish after them");
  int good = 1;
  for (int i = 0; i < kCount && good; ++i) good = holds(back[i], kPiece, i * kPiece, 100 + i, 1);
  check(good, "each 8 MiB came back + 1");
}

int main(int argc, char** argv) {
  cl_int rc;
  if (!first_device(&device)) return 1;
  ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  cl_command_queue q = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &rc);
  cl_command_queue q2 = clCreateCommandQueue(ctx, device, 0, &rc);
  const char* src = "__kernel void inc(__global uchar* p) { size_t i = get_global_id(0); p[i] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &rc);
  if (clBuildProgram(prog, 1, &device, "", NULL, NULL) != CL_SUCCESS) return fprintf(stderr, "build failed\n"), 1;
  inc = clCreateKernel(prog, "inc", &rc);
  cl_mem big = clCreateBuffer(ctx, CL_MEM_READ_WRITE, kCount * kPiece, NULL, &rc);
  if (rc != CL_SUCCESS) return fprintf(stderr, "no buffer of %zu MiB\n", kCount * kPiece / MiB), 1;
  for (int i = 0; i < kCount; ++i) {
    host[i] = malloc(kPiece);
    back[i] = malloc(kPiece);
    fill(host[i], kPiece, i * kPiece, 100 + i);
  }

  if (argc > 1 && !strcmp(argv[1], "inflight")) {
    queued_writes(q, big, 0);
    clFlush(q);
    printf("queued\n");
    fflush(stdout);
    sleep(60);
    return 0;
  }

  /* (1) Queued by the dozen. */
  queued_writes(q, big, 1);

  /* (2) A transfer on a second queue held back by a user event holds nothing up on the first. */
  cl_mem other = clCreateBuffer(ctx, CL_MEM_READ_WRITE, kPiece, NULL, &rc);
  cl_event gate = clCreateUserEvent(ctx, &rc);
  cl_event held;
  uint8_t* mine = malloc(kPiece);
  fill(mine, kPiece, 0, 7);
  check(clEnqueueWriteBuffer(q2, other, CL_FALSE, 0, kPiece, mine, 1, &gate, &held) == CL_SUCCESS,
        "a write held back by a user event");
  for (int i = 0; i < kCount; ++i) fill(host[i], kPiece, i * kPiece, 200 + i);
  queued_writes(q, big, 0);
  check(clFinish(q) == CL_SUCCESS, "the other queue's 64 transfers finish meanwhile");
  int good = 1;
  for (int i = 0; i < kCount && good; ++i) good = holds(back[i], kPiece, i * kPiece, 200 + i, 1);
  check(good, "their data");
  cl_int status = 0;
  clGetEventInfo(held, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  check(status > CL_COMPLETE, "the held write is not complete yet");
  clSetUserEventStatus(gate, CL_COMPLETE);
  check(clWaitForEvents(1, &held) == CL_SUCCESS, "it completes once the event is set");
  memset(back[0], 0, kPiece);
  check(clEnqueueReadBuffer(q2, other, CL_TRUE, 0, kPiece, back[0], 0, NULL, NULL) == CL_SUCCESS, "read it back");
  check(holds(back[0], kPiece, 0, 7, 0), "the held write's data");
  clReleaseEvent(held);
  clReleaseEvent(gate);

  /* (3) Interleaved on one in-order queue: each command sees the one before it. */
  fill(host[0], kPiece, 0, 11);
  fill(host[1], kPiece, 0, 12);
  cl_event w0, k0, r0, k1, r1, w1, k2, r2;
  rc = clEnqueueWriteBuffer(q, big, CL_FALSE, 0, kPiece, host[0], 0, NULL, &w0);
  rc |= add_one(q, big, 0, kPiece, 0, NULL, &k0);
  rc |= clEnqueueReadBuffer(q, big, CL_FALSE, 0, kPiece, back[0], 0, NULL, &r0);
  rc |= add_one(q, big, 0, kPiece, 0, NULL, &k1);
  rc |= clEnqueueReadBuffer(q, big, CL_FALSE, 0, kPiece, back[1], 0, NULL, &r1);
  rc |= clEnqueueWriteBuffer(q, big, CL_FALSE, kPiece, kPiece, host[1], 1, &r1, &w1);
  rc |= add_one(q, big, kPiece, kPiece, 1, &w1, &k2);
  rc |= clEnqueueReadBuffer(q, big, CL_FALSE, kPiece, kPiece, back[2], 1, &k2, &r2);
  check(rc == CL_SUCCESS, "write, kernel, read, kernel, read, write, kernel, read queued");
  check(clWaitForEvents(1, &r2) == CL_SUCCESS, "wait for the last read");
  cl_event all[] = {w0, k0, r0, k1, r1, w1, k2};
  check(clWaitForEvents(7, all) == CL_SUCCESS, "the commands before it complete");
  int done = 1;
  for (int i = 0; i < 7; ++i) {
    clGetEventInfo(all[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    done &= status == CL_COMPLETE;
  }
  check(done, "with success");
  check(holds(back[0], kPiece, 0, 11, 1), "the first read sees the first kernel");
  check(holds(back[1], kPiece, 0, 11, 2), "the second read sees the second kernel");
  check(holds(back[2], kPiece, 0, 12, 1), "the last read sees its write and kernel");
  cl_ulong start = 0, end = 0;
  check(clGetEventProfilingInfo(w0, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(w0, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS && end >= start,
        "a transfer's event is profiled");
  for (int i = 0; i < 7; ++i) clReleaseEvent(all[i]);
  clReleaseEvent(r2);

  /* (4) Maps. Non-blocking for reading, at an offset. */
  fill(host[0], kPiece, 0, 21);
  clEnqueueWriteBuffer(q, big, CL_TRUE, 3 * kPiece, kPiece, host[0], 0, NULL, NULL);
  cl_event mapped;
  uint8_t* m = clEnqueueMapBuffer(q, big, CL_FALSE, CL_MAP_READ, 3 * kPiece + 4096, 5 * MiB, 0, NULL, &mapped, &rc);
  check(rc == CL_SUCCESS && m, "non-blocking map for reading");
  check(clWaitForEvents(1, &mapped) == CL_SUCCESS, "wait for the map");
  if (m) {
    check(holds(m, 5 * MiB, 4096, 21, 0), "the mapped data");
    check(clEnqueueUnmapMemObject(q, big, m, 0, NULL, NULL) == CL_SUCCESS, "unmap it");
  }
  clReleaseEvent(mapped);
  /* For writing (not invalidated: the data is there), changed in place, two mappings at once. */
  uint8_t* a = clEnqueueMapBuffer(q, big, CL_TRUE, CL_MAP_WRITE, 3 * kPiece, 2 * MiB, 0, NULL, NULL, &rc);
  check(rc == CL_SUCCESS && a, "map for writing");
  uint8_t* b = clEnqueueMapBuffer(q, big, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 3 * kPiece + 4 * MiB, 3 * MiB, 0, NULL,
                                  NULL, &rc);
  check(rc == CL_SUCCESS && b, "a second mapping");
  if (a && b) {
    check(holds(a, 2 * MiB, 0, 21, 0) && holds(b, 3 * MiB, 4 * MiB, 21, 0), "both hold the data");
    for (size_t i = 0; i < 2 * MiB; ++i) a[i] += 2;
    for (size_t i = 0; i < 3 * MiB; ++i) b[i] += 3;
    cl_event un;
    check(clEnqueueUnmapMemObject(q, big, b, 0, NULL, &un) == CL_SUCCESS, "unmap the second");
    check(clEnqueueUnmapMemObject(q, big, a, 0, NULL, NULL) == CL_SUCCESS, "unmap the first");
    check(clWaitForEvents(1, &un) == CL_SUCCESS, "wait for an unmap");
    clReleaseEvent(un);
    check(add_one(q, big, 3 * kPiece, kPiece, 0, NULL, NULL) == CL_SUCCESS, "a kernel after the unmaps");
    memset(back[0], 0, kPiece);
    check(clEnqueueReadBuffer(q, big, CL_TRUE, 3 * kPiece, kPiece, back[0], 0, NULL, NULL) == CL_SUCCESS, "read it");
    check(holds(back[0], 2 * MiB, 0, 21, 3) && holds(back[0] + 2 * MiB, 2 * MiB, 2 * MiB, 21, 1) &&
              holds(back[0] + 4 * MiB, 3 * MiB, 4 * MiB, 21, 4) && holds(back[0] + 7 * MiB, MiB, 7 * MiB, 21, 1),
          "the kernel saw what the unmaps wrote back");
  }
  /* Mapped again and again (the same memory may serve): each map holds the current data. */
  int maps = 1;
  for (int i = 0; i < 4; ++i) {
    uint8_t* p = clEnqueueMapBuffer(q, big, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, 6 * MiB, 0, NULL, NULL, &rc);
    if (rc != CL_SUCCESS || !p) {
      maps = 0;
      break;
    }
    fill(p, 6 * MiB, 0, 30 + i);
    clEnqueueUnmapMemObject(q, big, p, 0, NULL, NULL);
    p = clEnqueueMapBuffer(q, big, CL_TRUE, CL_MAP_READ, 0, 6 * MiB, 0, NULL, NULL, &rc);
    maps &= rc == CL_SUCCESS && p && holds(p, 6 * MiB, 0, 30 + i, 0);
    if (p) clEnqueueUnmapMemObject(q, big, p, 0, NULL, NULL);
  }
  check(maps, "map, write, unmap, map to read, four times");
  /* A non-blocking map for reading and writing, unmapped at once without waiting (legal: the queue
     orders them): the unmap must not write back, nor free, memory the map's read is still filling,
     so the buffer keeps its data. */
  fill(host[0], 6 * MiB, 0, 40);
  clEnqueueWriteBuffer(q, big, CL_TRUE, 0, 6 * MiB, host[0], 0, NULL, NULL);
  int unchanged = 1;
  for (int i = 0; i < 4; ++i) {
    uint8_t* p = clEnqueueMapBuffer(q, big, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, 6 * MiB, 0, NULL, NULL, &rc);
    unchanged &= rc == CL_SUCCESS && p && clEnqueueUnmapMemObject(q, big, p, 0, NULL, NULL) == CL_SUCCESS;
  }
  memset(back[0], 0, 6 * MiB);
  clEnqueueReadBuffer(q, big, CL_TRUE, 0, 6 * MiB, back[0], 0, NULL, NULL);
  check(unchanged && holds(back[0], 6 * MiB, 0, 40, 0), "map without waiting, unmap at once: the data stays");
  check(clFinish(q) == CL_SUCCESS, "finish");

  for (int i = 0; i < kCount; ++i) free(host[i]), free(back[i]);
  free(mine);
  clReleaseMemObject(other);
  clReleaseMemObject(big);
  clReleaseKernel(inc);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q2);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return verdict("opencl_queued");
}
