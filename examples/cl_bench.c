/* An ordinary OpenCL program (built with -lOpenCL, nothing of Outboard's) that measures what a
 * remote OpenCL platform costs: run it on a platform directly and through Outboard's ICD, side by
 * side. Every figure is host wall time, as a program sees it.
 *   cl_bench [--platform TEXT] [--n N] [--iters I] [--reps R] [--size M] [TEST...]
 *   --platform TEXT  the first platform whose name contains TEXT (default: the first platform)
 *   --n N            stream arrays of N doubles (default 2^25)    --iters I  stream iterations (100)
 *   --reps R         latency and enqueue repetitions (10000)      --size M   matmul order (2048)
 *   TEST             latency enqueue loops stream bandwidth matmul (default: all)
 *   The first line, "startup_platforms_ms", times the program's first clGetPlatformIDs (the
 *   loader's and every platform's start-up: through Outboard, connecting to each server).
 *   --list           print the platforms, numbered as clGetPlatformIDs gives them, and stop
 * Output: one line per figure, "name value unit", then "check ok" or "check FAILED ...". */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(call)                                                                   \
  do {                                                                                \
    cl_int err_ = (call);                                                             \
    if (err_ != CL_SUCCESS) {                                                         \
      fprintf(stderr, "cl_bench: %s failed: %d (line %d)\n", #call, err_, __LINE__);  \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static const char* kSource =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "kernel void empty(global int* x) {}\n"
    "kernel void small(global int* x, int v) { x[get_global_id(0)] = v; }\n"
    "kernel void stream_copy(global const double* a, global double* c) { size_t i = get_global_id(0); c[i] = a[i]; }\n"
    "kernel void stream_mul(global double* b, global const double* c, double s) { size_t i = get_global_id(0); b[i] = s * c[i]; }\n"
    "kernel void stream_add(global const double* a, global const double* b, global double* c) {\n"
    "  size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
    "kernel void stream_triad(global double* a, global const double* b, global const double* c, double s) {\n"
    "  size_t i = get_global_id(0); a[i] = b[i] + s * c[i]; }\n"
    /* Each work-group sums a strided share into one partial sum. */
    "kernel void stream_dot(global const double* a, global const double* b, global double* sums, local double* part, ulong n) {\n"
    "  size_t i = get_global_id(0), l = get_local_id(0); double s = 0;\n"
    "  for (; i < n; i += get_global_size(0)) s += a[i] * b[i];\n"
    "  part[l] = s;\n"
    "  for (size_t o = get_local_size(0) / 2; o > 0; o /= 2) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE); if (l < o) part[l] += part[l + o]; }\n"
    "  if (l == 0) sums[get_group_id(0)] = part[0]; }\n"
    /* C = A B, square, row-major, 16x16 tiles in local memory (n a multiple of 16). */
    "kernel void matmul(int n, global const float* A, global const float* B, global float* C) {\n"
    "  local float ta[16][16], tb[16][16];\n"
    "  int r = get_global_id(1), c = get_global_id(0), lr = get_local_id(1), lc = get_local_id(0);\n"
    "  float acc = 0;\n"
    "  for (int t = 0; t < n; t += 16) {\n"
    "    ta[lr][lc] = A[r * n + t + lc]; tb[lr][lc] = B[(t + lr) * n + c];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int k = 0; k < 16; ++k) acc += ta[lr][k] * tb[k][lc];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "  C[r * n + c] = acc; }\n";

static cl_context ctx;
static cl_command_queue q;
static cl_program prog;
static cl_device_id dev;
static int failures;

static cl_kernel kernel(const char* name) {
  cl_int err;
  cl_kernel k = clCreateKernel(prog, name, &err);
  if (err != CL_SUCCESS) fprintf(stderr, "cl_bench: no kernel %s\n", name);
  CHECK(err);
  return k;
}

static cl_mem buffer(size_t bytes) {
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  CHECK(err);
  return m;
}

static int by_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* A blocking command's round trip: an empty kernel, then clFinish; and a 4-byte blocking read. */
static void latency(int reps) {
  cl_kernel k = kernel("empty");
  cl_mem m = buffer(4);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  const size_t one = 1;
  double* t = malloc(sizeof(double) * reps);
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = -reps / 10; i < reps; ++i) { /* the first tenth warms up */
      double t0 = now();
      if (pass == 0) {
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
      } else {
        int v;
        CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL));
      }
      if (i >= 0) t[i] = now() - t0;
    }
    qsort(t, reps, sizeof *t, by_double);
    double sum = 0;
    for (int i = 0; i < reps; ++i) sum += t[i];
    const char* what = pass == 0 ? "latency_kernel_finish" : "latency_read4";
    printf("%s_median %.2f us\n%s_mean %.2f us\n%s_p99 %.2f us\n", what, t[reps / 2] * 1e6, what, sum / reps * 1e6,
           what, t[reps * 99 / 100] * 1e6);
  }
  free(t);
  clReleaseMemObject(m);
  clReleaseKernel(k);
}

/* Launch-heavy loops as programs write them (issue 37): a small kernel, each followed by clFinish
 * or by a 4-byte blocking read; then the same with no wait in between (in-order queue, one
 * clFinish at the end; the reads non-blocking). Whole-loop wall time, best of 3 after a warm-up. */
static void loops(int reps) {
  cl_kernel k = kernel("small");
  cl_mem m = buffer(64);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  const size_t one = 1;
  const int finishes = reps * 2, reads = reps / 5 > 0 ? reps / 5 : 1;
  int* landing = malloc(sizeof(int) * reads);
  const char* what[4] = {"loop_kernel_finish", "loop_kernel_read4", "loop_kernel_nowait", "loop_kernel_read4_nowait"};
  for (int variant = 0; variant < 4; ++variant) {
    const int count = variant == 0 || variant == 2 ? finishes : reads;
    double best = 1e30;
    for (int trial = 0; trial < 4; ++trial) { /* the first warms up */
      CHECK(clFinish(q));
      double t0 = now();
      for (int i = 0; i < count; ++i) {
        CHECK(clSetKernelArg(k, 1, sizeof i, &i));
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
        if (variant == 0) CHECK(clFinish(q));
        if (variant == 1 || variant == 3)
          CHECK(clEnqueueReadBuffer(q, m, variant == 1 ? CL_TRUE : CL_FALSE, 0, sizeof(int), &landing[i], 0, NULL, NULL));
      }
      CHECK(clFinish(q));
      double t = now() - t0;
      if (trial > 0 && t < best) best = t;
      if (variant == 1 || variant == 3)
        for (int i = 0; i < count; ++i)
          if (landing[i] != i) {
            fprintf(stderr, "cl_bench: %s read %d at %d\n", what[variant], landing[i], i);
            failures++;
            break;
          }
    }
    printf("%s %.2f ms (%d iterations, %.2f us each)\n", what[variant], best * 1e3, count, best / count * 1e6);
  }
  free(landing);
  clReleaseMemObject(m);
  clReleaseKernel(k);
}

/* Non-blocking enqueues: how many per second the program can issue, and the whole batch's time. */
static void enqueue(int reps) {
  cl_kernel k = kernel("empty");
  cl_mem m = buffer(4);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  const size_t one = 1;
  CHECK(clFinish(q));
  for (int pass = 0; pass < 2; ++pass) {
    double t0 = now();
    for (int i = 0; i < reps; ++i) CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
    double t1 = now();
    CHECK(clFinish(q));
    double t2 = now();
    if (pass == 1) { /* the first pass warms up */
      printf("enqueue_rate %.0f per_s\n", reps / (t1 - t0));
      printf("enqueue_batch_rate %.0f per_s\n", reps / (t2 - t0));
    }
    /* clSetKernelArg between enqueues, as a program changing arguments does */
    t0 = now();
    for (int i = 0; i < reps; ++i) {
      CHECK(clSetKernelArg(k, 0, sizeof m, &m));
      CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
    }
    t1 = now();
    CHECK(clFinish(q));
    if (pass == 1) printf("enqueue_setarg_rate %.0f per_s\n", reps / (t1 - t0));
  }
  clReleaseMemObject(m);
  clReleaseKernel(k);
}

/* BabelStream's five kernels, each followed by clFinish, as BabelStream's OpenCL version times them. */
static void stream(size_t n, int iters) {
  const double start_a = 0.1, start_b = 0.2, start_c = 0.0, scalar = 0.4;
  const size_t bytes = n * sizeof(double), wg = 256, groups = 256;
  cl_mem a = buffer(bytes), b = buffer(bytes), c = buffer(bytes), sums = buffer(groups * sizeof(double));
  CHECK(clEnqueueFillBuffer(q, a, &start_a, sizeof start_a, 0, bytes, 0, NULL, NULL));
  CHECK(clEnqueueFillBuffer(q, b, &start_b, sizeof start_b, 0, bytes, 0, NULL, NULL));
  CHECK(clEnqueueFillBuffer(q, c, &start_c, sizeof start_c, 0, bytes, 0, NULL, NULL));
  CHECK(clFinish(q));
  cl_kernel k[5] = {kernel("stream_copy"), kernel("stream_mul"), kernel("stream_add"), kernel("stream_triad"),
                    kernel("stream_dot")};  /* not "dot": OpenCL C has a builtin of that name */
  const char* names[5] = {"copy", "mul", "add", "triad", "dot"};
  const double moved[5] = {2, 2, 3, 3, 2}; /* arrays read or written per element */
  cl_ulong nn = n;
  CHECK(clSetKernelArg(k[0], 0, sizeof a, &a)); CHECK(clSetKernelArg(k[0], 1, sizeof c, &c));
  CHECK(clSetKernelArg(k[1], 0, sizeof b, &b)); CHECK(clSetKernelArg(k[1], 1, sizeof c, &c));
  CHECK(clSetKernelArg(k[1], 2, sizeof scalar, &scalar));
  CHECK(clSetKernelArg(k[2], 0, sizeof a, &a)); CHECK(clSetKernelArg(k[2], 1, sizeof b, &b));
  CHECK(clSetKernelArg(k[2], 2, sizeof c, &c));
  CHECK(clSetKernelArg(k[3], 0, sizeof a, &a)); CHECK(clSetKernelArg(k[3], 1, sizeof b, &b));
  CHECK(clSetKernelArg(k[3], 2, sizeof c, &c)); CHECK(clSetKernelArg(k[3], 3, sizeof scalar, &scalar));
  CHECK(clSetKernelArg(k[4], 0, sizeof a, &a)); CHECK(clSetKernelArg(k[4], 1, sizeof b, &b));
  CHECK(clSetKernelArg(k[4], 2, sizeof sums, &sums)); CHECK(clSetKernelArg(k[4], 3, wg * sizeof(double), NULL));
  CHECK(clSetKernelArg(k[4], 4, sizeof nn, &nn));
  double tmin[5], tmax[5], tsum[5];
  for (int j = 0; j < 5; ++j) tmin[j] = 1e30, tmax[j] = 0, tsum[j] = 0;
  double partial[256], dot = 0;
  const double t_all = now();
  for (int it = 0; it < iters; ++it) {
    for (int j = 0; j < 5; ++j) {
      const size_t global = j == 4 ? wg * groups : n, local = wg;
      double t0 = now();
      CHECK(clEnqueueNDRangeKernel(q, k[j], 1, NULL, &global, j == 4 ? &local : NULL, 0, NULL, NULL));
      if (j == 4) {
        CHECK(clEnqueueReadBuffer(q, sums, CL_TRUE, 0, sizeof partial, partial, 0, NULL, NULL));
        dot = 0;
        for (size_t g = 0; g < groups; ++g) dot += partial[g];
      } else {
        CHECK(clFinish(q));
      }
      double t = now() - t0;
      if (it > 0) { /* BabelStream leaves the first iteration out */
        tmin[j] = t < tmin[j] ? t : tmin[j], tmax[j] = t > tmax[j] ? t : tmax[j];
        tsum[j] += t;
      }
    }
  }
  const double total = now() - t_all;
  for (int j = 0; j < 5; ++j)
    printf("stream_%s %.1f MB/s (min %.6f s, max %.6f s, avg %.6f s)\n", names[j], moved[j] * bytes / tmin[j] / 1e6,
           tmin[j], tmax[j], tsum[j] / (iters - 1));
  printf("stream_total %.3f s\n", total);
  /* The expected values, as BabelStream checks them. */
  double ga = start_a, gb = start_b, gc = start_c;
  for (int it = 0; it < iters; ++it) gc = ga, gb = scalar * gc, gc = ga + gb, ga = gb + scalar * gc;
  double* h = malloc(bytes);
  const double expect[3] = {ga, gb, gc};
  cl_mem arrays[3] = {a, b, c};
  for (int j = 0; j < 3; ++j) {
    CHECK(clEnqueueReadBuffer(q, arrays[j], CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    double err = 0;
    for (size_t i = 0; i < n; ++i) err += fabs(h[i] - expect[j]);
    if (err / n > 1e-8 * fabs(expect[j])) printf("check FAILED: stream array %c off by %g\n", "abc"[j], err / n), ++failures;
  }
  const double dot_expect = ga * gb * (double)n;
  if (fabs(dot - dot_expect) > 1e-8 * fabs(dot_expect)) printf("check FAILED: dot %g, expected %g\n", dot, dot_expect), ++failures;
  free(h);
  for (int j = 0; j < 5; ++j) clReleaseKernel(k[j]);
  clReleaseMemObject(a), clReleaseMemObject(b), clReleaseMemObject(c), clReleaseMemObject(sums);
}

static double least(double a, double b) { return a < b ? a : b; }

/* Whether h holds 0, 1, 2, ... (sampled). */
static void check_ramp(const double* h, size_t n, const char* what) {
  for (size_t i = 0; i < n; i += n / 97 + 1)
    if (h[i] != (double)i) {
      printf("check FAILED: %s: %g at %zu\n", what, h[i], i), ++failures;
      return;
    }
}

/* Transfers of the stream array size, best of five after a warm-up: blocking writes and reads;
   non-blocking ones, waited for by their event; maps for reading (blocking); unmaps after
   writing (the map invalidates the region; unmap and clFinish timed); and 8 non-blocking writes
   queued at once, then clFinish (the figure: all 8 together). */
static void bandwidth(size_t n) {
  const size_t bytes = n * sizeof(double);
  double* h = malloc(bytes);
  for (size_t i = 0; i < n; ++i) h[i] = (double)i;
  cl_mem m = buffer(bytes);
  double best_w = 1e30, best_r = 1e30, best_nw = 1e30, best_nr = 1e30, best_map = 1e30, best_unmap = 1e30, best_q = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    double t0 = now();
    CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    double t1 = now();
    memset(h, 0, bytes);
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    double t2 = now();
    check_ramp(h, n, "blocking read");
    cl_event e;
    const double t2b = now();
    CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, bytes, h, 0, NULL, &e));
    CHECK(clWaitForEvents(1, &e));
    double t3 = now();
    clReleaseEvent(e);
    memset(h, 0, bytes);
    double t4 = now();
    CHECK(clEnqueueReadBuffer(q, m, CL_FALSE, 0, bytes, h, 0, NULL, &e));
    CHECK(clWaitForEvents(1, &e));
    double t5 = now();
    clReleaseEvent(e);
    check_ramp(h, n, "non-blocking read");
    cl_int rc;
    const double t5b = now();
    double* p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &rc);
    double t6 = now();
    CHECK(rc);
    check_ramp(p, n, "map for reading");
    CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL));
    CHECK(clFinish(q));
    p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, NULL, NULL, &rc);
    CHECK(rc);
    memcpy(p, h, bytes);
    double t7 = now();
    CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL));
    CHECK(clFinish(q));
    double t8 = now();
    for (int k = 0; k < 8; ++k) CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, bytes, h, 0, NULL, NULL));
    CHECK(clFinish(q));
    double t9 = now();
    if (rep == 0) continue;
    best_w = least(best_w, t1 - t0), best_r = least(best_r, t2 - t1), best_nw = least(best_nw, t3 - t2b);
    best_nr = least(best_nr, t5 - t4), best_map = least(best_map, t6 - t5b), best_unmap = least(best_unmap, t8 - t7);
    best_q = least(best_q, (t9 - t8) / 8);
  }
  memset(h, 0, bytes);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, h, 0, NULL, NULL));
  check_ramp(h, n, "after the unmaps and queued writes");
  printf("write_bandwidth %.2f GB/s\nread_bandwidth %.2f GB/s\n", bytes / best_w / 1e9, bytes / best_r / 1e9);
  printf("write_nonblocking_bandwidth %.2f GB/s\nread_nonblocking_bandwidth %.2f GB/s\n", bytes / best_nw / 1e9,
         bytes / best_nr / 1e9);
  printf("map_read_bandwidth %.2f GB/s\nunmap_write_bandwidth %.2f GB/s\n", bytes / best_map / 1e9,
         bytes / best_unmap / 1e9);
  printf("write_queued8_bandwidth %.2f GB/s\n", bytes / best_q / 1e9);
  free(h);
  clReleaseMemObject(m);
}

static void matmul(int n) {
  n = (n + 15) / 16 * 16;
  const size_t bytes = (size_t)n * n * sizeof(float);
  float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
  for (size_t i = 0; i < (size_t)n * n; ++i) A[i] = (float)(i % 7) - 3, B[i] = (float)(i % 5) - 2;
  cl_mem a = buffer(bytes), b = buffer(bytes), c = buffer(bytes);
  CHECK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, bytes, A, 0, NULL, NULL));
  CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, bytes, B, 0, NULL, NULL));
  cl_kernel k = kernel("matmul");
  CHECK(clSetKernelArg(k, 0, sizeof n, &n)); CHECK(clSetKernelArg(k, 1, sizeof a, &a));
  CHECK(clSetKernelArg(k, 2, sizeof b, &b)); CHECK(clSetKernelArg(k, 3, sizeof c, &c));
  const size_t global[2] = {(size_t)n, (size_t)n}, local[2] = {16, 16};
  double best = 1e30;
  for (int rep = 0; rep < 4; ++rep) {
    double t0 = now();
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0, NULL, NULL));
    CHECK(clFinish(q));
    double t = now() - t0;
    if (rep > 0 && t < best) best = t;
  }
  CHECK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, bytes, C, 0, NULL, NULL));
  for (int s = 0; s < 16; ++s) { /* a few entries against the host */
    const int r = (s * 131) % n, col = (s * 71) % n;
    double e = 0;
    for (int t = 0; t < n; ++t) e += (double)A[(size_t)r * n + t] * B[(size_t)t * n + col];
    if (fabs(C[(size_t)r * n + col] - e) > 1e-3 * (fabs(e) + 1)) {
      printf("check FAILED: matmul C[%d][%d] = %g, expected %g\n", r, col, C[(size_t)r * n + col], e), ++failures;
      break;
    }
  }
  printf("matmul_%d %.3f s, %.1f GFLOP/s\n", n, best, 2.0 * n * n * n / best / 1e9);
  free(A), free(B), free(C);
  clReleaseKernel(k);
  clReleaseMemObject(a), clReleaseMemObject(b), clReleaseMemObject(c);
}

int main(int argc, char** argv) {
  const char* want = NULL;
  size_t n = (size_t)1 << 25;
  int iters = 100, reps = 10000, size = 2048, tests = 0, list = 0;
  const char* names[] = {"latency", "enqueue", "stream", "bandwidth", "matmul", "loops"};
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--list")) list = 1;
    else if (!strcmp(argv[i], "--platform") && i + 1 < argc) want = argv[++i];
    else if (!strcmp(argv[i], "--n") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--size") && i + 1 < argc) size = atoi(argv[++i]);
    else {
      int t = 0;
      while (t < 6 && strcmp(argv[i], names[t])) ++t;
      if (t == 6) return fprintf(stderr, "usage: cl_bench [--platform TEXT] [--n N] [--iters I] [--reps R] [--size M] [latency|enqueue|loops|stream|bandwidth|matmul]...\n"), 2;
      tests |= 1 << t;
    }
  }
  if (!tests) tests = 63;
  if (n < 65536 || iters < 2 || reps < 10 || size < 16) return fprintf(stderr, "cl_bench: n >= 65536, iters >= 2, reps >= 10, size >= 16\n"), 2;
  cl_platform_id platforms[32];
  cl_uint np = 0;
  const double started = now();
  CHECK(clGetPlatformIDs(32, platforms, &np));
  const double startup = now() - started;
  cl_platform_id p = NULL;
  char name[256] = "";
  for (cl_uint i = 0; i < np && !p; ++i) {
    CHECK(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
    if (list) {
      printf("platform %u: %s\n", i, name);
      continue;
    }
    if (!want || strstr(name, want)) p = platforms[i];
  }
  if (list) return 0;
  printf("startup_platforms_ms %.2f ms\n", startup * 1e3);
  if (!p) return fprintf(stderr, "cl_bench: no platform named like '%s'\n", want ? want : ""), 1;
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  char dname[256];
  CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL));
  printf("platform %s\ndevice %s\n", name, dname);
  cl_int err;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  q = clCreateCommandQueue(ctx, dev, 0, &err);
  CHECK(err);
  prog = clCreateProgramWithSource(ctx, 1, &kSource, NULL, &err);
  CHECK(err);
  if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    return fprintf(stderr, "cl_bench: build failed:\n%s\n", log), 1;
  }
  if (tests & 1) latency(reps);
  if (tests & 2) enqueue(reps);
  if (tests & 32) loops(reps);
  if (tests & 4) stream(n, iters);
  if (tests & 8) bandwidth(n);
  if (tests & 16) matmul(size);
  printf(failures ? "check FAILED\n" : "check ok\n");
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return failures ? 1 : 0;
}
