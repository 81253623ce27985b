/* How soon a platform lets a thread learn that an empty kernel has finished, by each way a
 * forwarding server could wait: clFinish on the enqueuing thread, clWaitForEvents on a kernel's
 * or a barrier's event, on the enqueuing thread or on another one (as a server's waiter thread
 * does), polling the event's status, a completion callback, clFinish on another thread, and the
 * waits again with a completion callback registered on the event; then the same for a 4-byte
 * read into ordinary memory, and polled into page-locked memory; then what the calls a server
 * makes per command cost the calling thread ("call.<name> median_us p90_us"). It bounds
 * what a remote clFinish can cost above the native one (bench/results/h200/opencl).
 *   cl_wait_probe [--platform TEXT] [--reps R]
 * Output: one line per way, "wait.<way> median_us p90_us". Built with -lOpenCL -lpthread only. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cl_int err_ = (call);                                                                  \
    if (err_ != CL_SUCCESS) {                                                              \
      fprintf(stderr, "cl_wait_probe: %s failed: %d (line %d)\n", #call, err_, __LINE__);  \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static cl_command_queue queue;
static cl_kernel kernel;
static cl_mem buffer;       /* what the reads read */
static char landing[64];    /* where they land: ordinary (pageable) memory, as a server's */
static void* pinned;        /* or page-locked memory */

/* The helper thread: it takes an event (or, for `finish`, the queue), waits its way, says done. */
enum Way { kWaitEvent, kPollEvent, kFinishQueue };
static _Atomic(cl_event) handed;
static _Atomic int handed_way = -1, done_flag, stop_helper, called_back;

static void* helper(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_helper)) {
    int way = atomic_load(&handed_way);
    if (way < 0) continue;
    cl_event e = atomic_load(&handed);
    if (way == kWaitEvent) {
      clWaitForEvents(1, &e);
    } else if (way == kPollEvent) {
      cl_int status = CL_QUEUED;
      do clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
      while (status > 0);
    } else {
      clFinish(queue);
    }
    atomic_store(&handed_way, -1);
    atomic_store(&done_flag, 1);
  }
  return NULL;
}

static void CL_CALLBACK on_complete(cl_event e, cl_int status, void* arg) {
  (void)e, (void)status, (void)arg;
  atomic_store(&called_back, 1);
}

static void hand(int way, cl_event e) {
  atomic_store(&done_flag, 0);
  atomic_store(&handed, e);
  atomic_store(&handed_way, way);
  while (!atomic_load(&done_flag)) {
  }
}

static void launch(cl_event* e) {
  size_t global = 1;
  CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, e));
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* One way, timed `reps` times after a warm-up; prints the median and 90th percentile. */
static void measure(const char* name, int way_index, int reps) {
  double* t = malloc(sizeof(double) * reps);
  for (int i = -reps / 10; i < reps; ++i) {
    cl_event e = NULL;
    double start = now_us();
    switch (way_index) {
      case 0:  /* clFinish on the enqueuing thread: what a local program does */
        launch(NULL);
        CHECK(clFinish(queue));
        break;
      case 1:  /* the kernel's own event, waited for on the enqueuing thread */
        launch(&e);
        CHECK(clWaitForEvents(1, &e));
        break;
      case 2:  /* a barrier's event (a remote clFinish), waited for on the enqueuing thread */
        launch(NULL);
        CHECK(clEnqueueBarrierWithWaitList(queue, 0, NULL, &e));
        CHECK(clFlush(queue));
        CHECK(clWaitForEvents(1, &e));
        break;
      case 3:  /* the same, waited for by another thread (the server's event waiter) */
        launch(NULL);
        CHECK(clEnqueueBarrierWithWaitList(queue, 0, NULL, &e));
        CHECK(clFlush(queue));
        hand(kWaitEvent, e);
        break;
      case 4:  /* the kernel's event, waited for by another thread */
        launch(&e);
        CHECK(clFlush(queue));
        hand(kWaitEvent, e);
        break;
      case 5:  /* the barrier's event polled by another thread (clGetEventInfo in a loop) */
        launch(NULL);
        CHECK(clEnqueueBarrierWithWaitList(queue, 0, NULL, &e));
        CHECK(clFlush(queue));
        hand(kPollEvent, e);
        break;
      case 6:  /* the kernel's event polled by another thread */
        launch(&e);
        CHECK(clFlush(queue));
        hand(kPollEvent, e);
        break;
      case 7:  /* a completion callback on the barrier's event */
        launch(NULL);
        CHECK(clEnqueueBarrierWithWaitList(queue, 0, NULL, &e));
        atomic_store(&called_back, 0);
        CHECK(clSetEventCallback(e, CL_COMPLETE, on_complete, NULL));
        CHECK(clFlush(queue));
        while (!atomic_load(&called_back)) {
        }
        break;
      case 8:  /* clFinish on another thread */
        launch(NULL);
        CHECK(clFlush(queue));
        hand(kFinishQueue, NULL);
        break;
      case 9:  /* a barrier's event with a callback registered, waited for by another thread */
      case 10: /* the same, its status polled by another thread */
        launch(NULL);
        CHECK(clEnqueueBarrierWithWaitList(queue, 0, NULL, &e));
        CHECK(clSetEventCallback(e, CL_COMPLETE, on_complete, NULL));
        CHECK(clFlush(queue));
        hand(way_index == 9 ? kWaitEvent : kPollEvent, e);
        break;
      case 11: /* clFinish on the enqueuing thread, a callback registered on the kernel's event */
        launch(&e);
        CHECK(clSetEventCallback(e, CL_COMPLETE, on_complete, NULL));
        CHECK(clFinish(queue));
        break;
      case 12: /* a blocking 4-byte read: what a local program does */
        CHECK(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, 4, landing, 0, NULL, NULL));
        break;
      case 13: /* a non-blocking 4-byte read, its event waited for on the enqueuing thread */
      case 14: /* the same, waited for by another thread */
      case 15: /* the same, its status polled by another thread */
      case 16: /* the same, a callback registered, waited for by another thread (a server's way) */
      case 17: /* the same as 15 into page-locked memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer) */
        CHECK(clEnqueueReadBuffer(queue, buffer, CL_FALSE, 0, 4, way_index == 17 ? pinned : landing, 0, NULL, &e));
        if (way_index == 16) CHECK(clSetEventCallback(e, CL_COMPLETE, on_complete, NULL));
        CHECK(clFlush(queue));
        if (way_index == 13) CHECK(clWaitForEvents(1, &e));
        else hand(way_index == 15 || way_index == 17 ? kPollEvent : kWaitEvent, e);
        break;
    }
    double took = now_us() - start;
    if (way_index == 7 || way_index == 9 || way_index == 10 || way_index == 11 || way_index == 16) CHECK(clFinish(queue)); /* the callback may run before the event's release */
    if (e) clReleaseEvent(e);
    if (i >= 0) t[i] = took;
  }
  qsort(t, reps, sizeof(double), by_value);
  printf("wait.%s %.2f %.2f\n", name, t[reps / 2], t[reps * 9 / 10]);
  fflush(stdout);
  free(t);
}

/* What each call a forwarding server makes per command costs the calling thread: the median of
 * single calls, the queue drained every 32 calls (outside the timing). */
enum Call { kKernel, kKernelEvent, kSetArgKernel, kBarrierEvent, kFlush, kQueueInfo, kCalls };
static void measure_call(const char* name, enum Call call, int reps) {
  double* t = malloc(sizeof(double) * reps);
  for (int i = 0; i < reps; ++i) {
    if (i % 32 == 0) CHECK(clFinish(queue));
    cl_event e = NULL;
    cl_command_queue_properties props;
    const size_t global = 1;
    const double start = now_us();
    switch (call) {
      case kKernel: CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL)); break;
      case kKernelEvent:
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, &e));
        clReleaseEvent(e);
        break;
      case kSetArgKernel:
        CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
        break;
      case kBarrierEvent:
        CHECK(clEnqueueBarrierWithWaitList(queue, 0, NULL, &e));
        clReleaseEvent(e);
        break;
      case kFlush: CHECK(clFlush(queue)); break;
      default: CHECK(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL)); break;
    }
    t[i] = now_us() - start;
  }
  CHECK(clFinish(queue));
  qsort(t, reps, sizeof(double), by_value);
  printf("call.%s median_us %.2f p90_us %.2f\n", name, t[reps / 2], t[reps * 9 / 10]);
  free(t);
}

int main(int argc, char** argv) {
  const char* want = "";
  int reps = 5000;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--platform") && i + 1 < argc) want = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else return fprintf(stderr, "usage: cl_wait_probe [--platform TEXT] [--reps R]\n"), 2;
  }
  if (reps < 10) reps = 10;
  cl_platform_id platforms[16];
  cl_uint count = 0;
  CHECK(clGetPlatformIDs(16, platforms, &count));
  cl_platform_id platform = NULL;
  for (cl_uint i = 0; i < count && !platform; ++i) {
    char name[256] = "";
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (strstr(name, want)) platform = platforms[i], printf("platform %s\n", name);
  }
  if (!platform) return fprintf(stderr, "cl_wait_probe: no platform matches \"%s\"\n", want), 1;
  cl_device_id device;
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
  cl_int err;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK(err);
  queue = clCreateCommandQueue(context, device, 0, &err);
  CHECK(err);
  const char* source = "kernel void empty(global int* x) {}\n";
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
  kernel = clCreateKernel(program, "empty", &err);
  CHECK(err);
  cl_mem x = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kernel, 0, sizeof x, &x));
  buffer = x;
  cl_mem host = clCreateBuffer(context, CL_MEM_ALLOC_HOST_PTR, 4096, NULL, &err);
  CHECK(err);
  pinned = clEnqueueMapBuffer(queue, host, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096, 0, NULL, NULL, &err);
  CHECK(err);
  pthread_t thread;
  pthread_create(&thread, NULL, helper, NULL);
  static const char* names[] = {"finish",          "kernel_event",    "barrier_event",
                                "barrier_event_other_thread", "kernel_event_other_thread",
                                "barrier_poll_other_thread",  "kernel_poll_other_thread",
                                "barrier_callback", "finish_other_thread",
                                "barrier_event_other_thread_with_callback",
                                "barrier_poll_other_thread_with_callback", "finish_with_callback",
                                "read4_blocking", "read4_event", "read4_event_other_thread",
                                "read4_poll_other_thread", "read4_event_other_thread_with_callback",
                                "read4_pinned_poll_other_thread"};
  for (int w = 0; w < 18; ++w) measure(names[w], w, reps);
  static const char* calls[] = {"kernel", "kernel_with_event", "set_arg_and_kernel", "barrier_with_event", "flush",
                                "queue_info"};
  for (int c = 0; c < kCalls; ++c) measure_call(calls[c], c, reps);
  atomic_store(&stop_helper, 1);
  pthread_join(thread, NULL);
  clEnqueueUnmapMemObject(queue, host, pinned, 0, NULL, NULL);
  clFinish(queue);
  clReleaseMemObject(host);
  clReleaseMemObject(x);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
