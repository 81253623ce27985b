/* An ordinary OpenCL program (linked with -lOpenCL only) that uses one platform from 8 threads at
   once: threads 0-3 share one context and its program (each with its own queue and kernels),
   threads 4-7 each make a context, program and queue of their own. Every thread sets kernel
   arguments and launches kernels of its own while the others do, writes its input, reads the
   result (blocking, and non-blocking with events and a callback) and checks every value. The
   last lines: "kernels: K" (launches in all) and "opencl_threads: N passed, M failed". */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define SHARED 4 /* threads sharing one context */
#define ROUNDS 12
#define N 8192

static const char* kSource =
    "__kernel void affine(__global const int* x, __global int* y, int a, int b) {\n"
    "  size_t i = get_global_id(0); y[i] = a * x[i] + b; }\n"
    "__kernel void add(__global const int* x, __global int* y) {\n"
    "  size_t i = get_global_id(0); y[i] += x[i]; }\n";

static cl_device_id device;
static int passed_total = 0, failed_total = 0, kernels_total = 0;
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;

struct Thread {
  int index;
  cl_context ctx;   /* the shared one, or null: the thread makes its own */
  cl_program prog;  /* likewise */
  int passed, failed, kernels;
  char first_failure[200];
};

static void check(struct Thread* t, int ok, const char* what, int round, cl_int code) {
  if (ok) {
    ++t->passed;
  } else if (t->failed++ == 0) {
    snprintf(t->first_failure, sizeof t->first_failure, "%s (round %d, code %d)", what, round, (int)code);
  }
}

static void CL_CALLBACK count_done(cl_event e, cl_int status, void* data) {
  (void)e;
  if (status == CL_COMPLETE) __atomic_add_fetch((int*)data, 1, __ATOMIC_SEQ_CST);
}

static cl_program build(cl_context ctx, cl_int* rc) {
  cl_program p = clCreateProgramWithSource(ctx, 1, &kSource, NULL, rc);
  if (*rc == CL_SUCCESS) *rc = clBuildProgram(p, 1, &device, "", NULL, NULL);
  return p;
}

static void* work(void* arg) {
  struct Thread* t = arg;
  cl_int rc = CL_SUCCESS;
  const int own = t->ctx == NULL;
  if (own) {
    t->ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
    check(t, rc == CL_SUCCESS, "own context", -1, rc);
    t->prog = build(t->ctx, &rc);
    check(t, rc == CL_SUCCESS, "own program built", -1, rc);
  }
  cl_command_queue q = clCreateCommandQueue(t->ctx, device, 0, &rc);
  check(t, rc == CL_SUCCESS, "queue", -1, rc);
  cl_kernel affine = clCreateKernel(t->prog, "affine", &rc);
  check(t, rc == CL_SUCCESS, "kernel affine", -1, rc);
  cl_kernel add = clCreateKernel(t->prog, "add", &rc);
  check(t, rc == CL_SUCCESS, "kernel add", -1, rc);
  cl_mem bx = clCreateBuffer(t->ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &rc);
  cl_mem by = clCreateBuffer(t->ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &rc);
  check(t, rc == CL_SUCCESS, "buffers", -1, rc);
  int* x = malloc(N * sizeof(int));
  int* y = malloc(N * sizeof(int));
  int callbacks = 0, launched_events = 0;
  const size_t global = N;

  for (int r = 0; r < ROUNDS; ++r) {
    const int a = t->index + 2, b = r * 1000 + t->index;
    for (int i = 0; i < N; ++i) x[i] = i ^ (t->index << 20) ^ r;
    /* Alternately blocking and non-blocking writes (the latter kept until the finish below). */
    rc = clEnqueueWriteBuffer(q, bx, r % 2 ? CL_TRUE : CL_FALSE, 0, N * sizeof(int), x, 0, NULL, NULL);
    check(t, rc == CL_SUCCESS, "write", r, rc);
    rc = clSetKernelArg(affine, 0, sizeof bx, &bx);
    rc |= clSetKernelArg(affine, 1, sizeof by, &by);
    rc |= clSetKernelArg(affine, 2, sizeof a, &a);
    rc |= clSetKernelArg(affine, 3, sizeof b, &b);
    check(t, rc == CL_SUCCESS, "set affine's arguments", r, rc);
    cl_event ran;
    rc = clEnqueueNDRangeKernel(q, affine, 1, NULL, &global, NULL, 0, NULL, &ran);
    check(t, rc == CL_SUCCESS, "launch affine", r, rc);
    if (rc == CL_SUCCESS) {
      ++t->kernels;
      ++launched_events;
      clSetEventCallback(ran, CL_COMPLETE, count_done, &callbacks);
    }
    /* y += x, twice: y = a x + b + 2 x. */
    rc = clSetKernelArg(add, 0, sizeof bx, &bx);
    rc |= clSetKernelArg(add, 1, sizeof by, &by);
    check(t, rc == CL_SUCCESS, "set add's arguments", r, rc);
    for (int k = 0; k < 2; ++k) {
      rc = clEnqueueNDRangeKernel(q, add, 1, NULL, &global, NULL, 1, &ran, NULL);
      check(t, rc == CL_SUCCESS, "launch add", r, rc);
      if (rc == CL_SUCCESS) ++t->kernels;
    }
    memset(y, 0, N * sizeof(int));
    if (r % 3 == 0) {
      rc = clEnqueueReadBuffer(q, by, CL_TRUE, 0, N * sizeof(int), y, 0, NULL, NULL);
      check(t, rc == CL_SUCCESS, "blocking read", r, rc);
    } else {
      cl_event read;
      rc = clEnqueueReadBuffer(q, by, CL_FALSE, 0, N * sizeof(int), y, 0, NULL, &read);
      check(t, rc == CL_SUCCESS, "read", r, rc);
      if (r % 3 == 1) {
        rc = clWaitForEvents(1, &read);
        check(t, rc == CL_SUCCESS, "wait for the read", r, rc);
      }
      clReleaseEvent(read);
    }
    rc = clFinish(q);
    check(t, rc == CL_SUCCESS, "finish", r, rc);
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += y[i] != a * x[i] + b + 2 * x[i];
    check(t, bad == 0, "the result", r, bad);
    clReleaseEvent(ran);
  }
  /* Callbacks run on the ICD's thread; clFinish does not wait for them. */
  for (int i = 0; i < 3000 && __atomic_load_n(&callbacks, __ATOMIC_SEQ_CST) < launched_events; ++i) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  check(t, callbacks == launched_events, "every callback ran with CL_COMPLETE", -1, callbacks);

  free(x);
  free(y);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseKernel(affine);
  clReleaseKernel(add);
  clReleaseCommandQueue(q);
  if (own) {
    clReleaseProgram(t->prog);
    clReleaseContext(t->ctx);
  }
  pthread_mutex_lock(&report_mu);
  passed_total += t->passed;
  failed_total += t->failed;
  kernels_total += t->kernels;
  if (t->failed) printf("thread %d: %d failed, first: %s\n", t->index, t->failed, t->first_failure);
  pthread_mutex_unlock(&report_mu);
  return NULL;
}

int main(void) {
  cl_platform_id platform;
  cl_int rc = clGetPlatformIDs(1, &platform, NULL);
  if (rc == CL_SUCCESS) rc = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
  if (rc != CL_SUCCESS) {
    printf("no OpenCL device (%d)\nopencl_threads: 0 passed, 1 failed\n", (int)rc);
    return 1;
  }
  cl_context shared = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  cl_program prog = build(shared, &rc);
  if (rc != CL_SUCCESS) {
    printf("shared program (%d)\nopencl_threads: 0 passed, 1 failed\n", (int)rc);
    return 1;
  }
  struct Thread threads[THREADS];
  pthread_t ids[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    memset(&threads[i], 0, sizeof threads[i]);
    threads[i].index = i;
    if (i < SHARED) threads[i].ctx = shared, threads[i].prog = prog;
    pthread_create(&ids[i], NULL, work, &threads[i]);
  }
  for (int i = 0; i < THREADS; ++i) pthread_join(ids[i], NULL);
  clReleaseProgram(prog);
  clReleaseContext(shared);
  printf("kernels: %d\n", kernels_total);
  printf("opencl_threads: %d passed, %d failed\n", passed_total, failed_total);
  return failed_total ? 1 : 0;
}
