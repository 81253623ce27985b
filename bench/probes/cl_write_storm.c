/* Whether a platform's OpenCL survives what a forwarding server asks of it when large writes
 * arrive faster than the device takes them (issue 36: OpenCL's data over the lanes stalled the
 * H200 host's NVIDIA OpenCL inside clEnqueueWriteBuffer). Each batch enqueues W non-blocking
 * writes of M MiB to one buffer, back to back, then waits for them all.
 *   --mode same       every write from one host array (a program's own queued writes)
 *   --mode fresh      each from a host array of its own, all filled before the first enqueue and
 *                     each freed once its write has completed (a server's received data)
 *   --waiter none     the enqueuing thread waits (clFinish), then frees
 *   --waiter wait     another thread waits for each write's event (clWaitForEvents), frees its
 *                     array and releases the event, as a server's waiter thread does
 *   --waiter poll     the same, polling the event's status
 *   --waiter callback each write's completion callback (clSetEventCallback, run on the platform's
 *                     own thread) frees its array and releases the event, as a server does for
 *                     queued writes nobody waits for
 *   --throttle MIB    before an enqueue, wait for earlier writes until at most MIB are in flight
 *                     (0: no limit)
 *   cl_write_storm [--platform TEXT] [--mode same|fresh] [--waiter none|wait|poll|callback]
 *                  [--throttle MIB] [--batches N] [--writes W] [--mib M] [--limit SECONDS]
 * Output: "storm ok batches N seconds S" or "storm STALLED batch B (after S s)" (exit 3): a
 * batch not done within --limit seconds. Built with -lOpenCL -lpthread only. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cl_int err_ = (call);                                                                  \
    if (err_ != CL_SUCCESS) {                                                              \
      fprintf(stderr, "cl_write_storm: %s failed: %d (line %d)\n", #call, err_, __LINE__); \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

enum { kMaxInFlight = 1024 };
typedef struct {
  cl_event event;
  void* host;
  size_t bytes;
} Write;

/* Writes handed to the waiter thread, in enqueue order. */
static Write ring[kMaxInFlight];
static unsigned head, tail; /* under mu */
static size_t in_flight_bytes;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int polling, stopping;
static atomic_int batch_now = -1;
static atomic_uint_fast64_t batch_started_ns;

static void* waiter(void* arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&mu);
    while (head == tail && !stopping) pthread_cond_wait(&cv, &mu);
    if (head == tail) {
      pthread_mutex_unlock(&mu);
      return NULL;
    }
    Write w = ring[head % kMaxInFlight];
    pthread_mutex_unlock(&mu);
    if (polling) {
      cl_int status = CL_QUEUED;
      do CHECK(clGetEventInfo(w.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
      while (status > CL_COMPLETE);
    } else {
      CHECK(clWaitForEvents(1, &w.event));
    }
    free(w.host);
    CHECK(clReleaseEvent(w.event));
    pthread_mutex_lock(&mu);
    ++head;
    in_flight_bytes -= w.bytes;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
  }
}

/* The write's completion, on the platform's callback thread. */
static void CL_CALLBACK write_done(cl_event e, cl_int status, void* arg) {
  (void)status;
  Write* w = arg;
  free(w->host);
  clReleaseEvent(e);
  pthread_mutex_lock(&mu);
  ++head;
  in_flight_bytes -= w->bytes;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  free(w);
}

static void* watchdog(void* arg) {
  const double limit = *(const double*)arg;
  for (;;) {
    sleep(1);
    const int b = atomic_load(&batch_now);
    const double started = atomic_load(&batch_started_ns) * 1e-9;
    if (b >= 0 && now_s() - started > limit) {
      printf("storm STALLED batch %d (after %.1f s)\n", b, now_s() - started);
      fflush(stdout);
      _exit(3);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char *platform_text = "", *mode = "fresh", *wait_mode = "wait";
  int batches = 30, writes = 8;
  size_t mib = 256, throttle_mib = 0;
  double limit = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--platform")) platform_text = argv[i + 1];
    else if (!strcmp(argv[i], "--mode")) mode = argv[i + 1];
    else if (!strcmp(argv[i], "--waiter")) wait_mode = argv[i + 1];
    else if (!strcmp(argv[i], "--throttle")) throttle_mib = strtoul(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--batches")) batches = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--writes")) writes = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--mib")) mib = strtoul(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--limit")) limit = atof(argv[i + 1]);
    else return fprintf(stderr, "cl_write_storm: unknown option %s\n", argv[i]), 2;
  }
  const int fresh = !strcmp(mode, "fresh"), threaded = strcmp(wait_mode, "none") != 0;
  const int callbacks = !strcmp(wait_mode, "callback");
  polling = !strcmp(wait_mode, "poll");
  const size_t bytes = mib << 20, throttle = throttle_mib << 20;

  cl_platform_id platforms[16];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(16, platforms, &np));
  cl_platform_id p = NULL;
  for (cl_uint i = 0; i < np && !p; ++i) {
    char name[256] = "";
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (strstr(name, platform_text)) p = platforms[i];
  }
  if (!p) return fprintf(stderr, "cl_write_storm: no platform matching '%s'\n", platform_text), 1;
  cl_device_id d;
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
  cl_int rc;
  cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &rc);
  CHECK(rc);
  cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &rc);
  CHECK(rc);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
  CHECK(rc);
  char* same = malloc(bytes);
  memset(same, 1, bytes);

  pthread_t waiter_thread, watchdog_thread;
  if (threaded && !callbacks) pthread_create(&waiter_thread, NULL, waiter, NULL);
  pthread_create(&watchdog_thread, NULL, watchdog, &limit);
  const double t0 = now_s();
  for (int b = 0; b < batches; ++b) {
    atomic_store(&batch_started_ns, (uint_fast64_t)(now_s() * 1e9));
    atomic_store(&batch_now, b);
    void* hosts[64];
    for (int k = 0; k < writes && k < 64; ++k) {  /* all arrived before the first is enqueued */
      hosts[k] = same;
      if (fresh) {
        hosts[k] = malloc(bytes);
        memset(hosts[k], (b + k) & 0xff, bytes);
      }
    }
    for (int k = 0; k < writes && k < 64; ++k) {
      void* host = hosts[k];
      if (threaded) {
        pthread_mutex_lock(&mu);
        while (throttle && in_flight_bytes && in_flight_bytes + bytes > throttle) pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
      }
      cl_event e;
      CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, bytes, host, 0, NULL, &e));
      if (!threaded) {
        CHECK(clReleaseEvent(e));
        continue;
      }
      pthread_mutex_lock(&mu);
      ++tail;
      in_flight_bytes += bytes;
      if (callbacks) {
        pthread_mutex_unlock(&mu);
        Write* w = malloc(sizeof *w);
        *w = (Write){e, fresh ? host : NULL, bytes};
        CHECK(clSetEventCallback(e, CL_COMPLETE, write_done, w));
        continue;
      }
      ring[(tail - 1) % kMaxInFlight] = (Write){e, fresh ? host : NULL, bytes};
      pthread_cond_broadcast(&cv);
      pthread_mutex_unlock(&mu);
    }
    if (threaded) {
      pthread_mutex_lock(&mu);
      while (head != tail) pthread_cond_wait(&cv, &mu);
      pthread_mutex_unlock(&mu);
    } else {
      CHECK(clFinish(q));
      if (fresh)
        for (int k = 0; k < writes && k < 64; ++k) free(hosts[k]);
    }
  }
  atomic_store(&batch_now, -1);
  printf("storm ok batches %d seconds %.2f (%.2f GB/s)\n", batches, now_s() - t0,
         (double)batches * writes * bytes / (now_s() - t0) / 1e9);
  if (threaded && !callbacks) {
    pthread_mutex_lock(&mu);
    stopping = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(waiter_thread, NULL);
  }
  return 0;
}
