/* An ordinary OpenCL program (linked with -lOpenCL only) for opencl_faults.sh, which harms the
   server while this program uses it. It checks that failures reach the program as OpenCL errors
   and that nothing hangs; its last line is "opencl_faults: N passed, M failed".
     lost    a long kernel is enqueued (then "enqueued" is printed, and the script kills or stops
             the server): the waits, the events, their callbacks, a blocking read on another
             thread and every later call must end with an error.
     slow    a kernel that may outlast OUTBOARD_TIMEOUT on a live server completes normally.
     list    prints the platforms' names ("platform: NAME"); at least one must be offered.
     refused a context, a queue and a small write and read on the first platform, which the server
             refuses (a native call there has not returned): the transfer fails, and nothing hangs.
     served  the same on a platform that serves: the data comes back.
     refused-later FILE  a context, queue and buffer first ("ready"), then, once FILE exists (the
             platform refused meanwhile), a blocking read: it fails, and nothing hangs. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Integer work the compiler cannot shorten: `rounds` x `n` steps of a scrambled LCG per item. */
static const char* kSource =
    "__kernel void spin(__global uint* x, uint n, uint rounds) {\n"
    "  size_t i = get_global_id(0); uint v = x[i];\n"
    "  for (uint r = 0; r < rounds; ++r)\n"
    "    for (uint k = 0; k < n; ++k) { v = v * 1664525u + 1013904223u; v ^= v >> 13; }\n"
    "  x[i] = v; }\n";

static int passed = 0, failed = 0;
static void check(int ok, const char* what, int code) {
  printf("%s %s (%d)\n", ok ? "ok:" : "FAILED:", what, code);
  fflush(stdout);
  if (ok) ++passed;
  else ++failed;
}

static int verdict(void) {
  printf("opencl_faults: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

static uint32_t spin_host(uint32_t v, uint32_t n, uint32_t rounds) {
  for (uint32_t r = 0; r < rounds; ++r)
    for (uint32_t k = 0; k < n; ++k) v = v * 1664525u + 1013904223u, v ^= v >> 13;
  return v;
}

struct Setup {
  cl_platform_id platform;
  cl_device_id device;
  cl_context ctx;
  cl_command_queue q;
  cl_program prog;
  cl_kernel spin;
  cl_mem buf;
};

#define ITEMS 2
static int setup(struct Setup* s) {
  cl_int rc = clGetPlatformIDs(1, &s->platform, NULL);
  if (rc != CL_SUCCESS) return check(0, "a platform", rc), 0;
  if ((rc = clGetDeviceIDs(s->platform, CL_DEVICE_TYPE_ALL, 1, &s->device, NULL)) != CL_SUCCESS)
    return check(0, "a device", rc), 0;
  s->ctx = clCreateContext(NULL, 1, &s->device, NULL, NULL, &rc);
  if (rc != CL_SUCCESS) return check(0, "context", rc), 0;
  s->q = clCreateCommandQueue(s->ctx, s->device, 0, &rc);
  if (rc != CL_SUCCESS) return check(0, "queue", rc), 0;
  s->prog = clCreateProgramWithSource(s->ctx, 1, &kSource, NULL, &rc);
  if (rc == CL_SUCCESS) rc = clBuildProgram(s->prog, 1, &s->device, "", NULL, NULL);
  if (rc != CL_SUCCESS) return check(0, "build", rc), 0;
  s->spin = clCreateKernel(s->prog, "spin", &rc);
  if (rc != CL_SUCCESS) return check(0, "kernel", rc), 0;
  cl_uint init[ITEMS] = {1, 2};
  s->buf = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init, init, &rc);
  if (rc != CL_SUCCESS) return check(0, "buffer", rc), 0;
  clSetKernelArg(s->spin, 0, sizeof s->buf, &s->buf);
  return 1;
}

static cl_int launch(struct Setup* s, cl_uint n, cl_uint rounds, cl_event* ev) {
  clSetKernelArg(s->spin, 1, sizeof n, &n);
  clSetKernelArg(s->spin, 2, sizeof rounds, &rounds);
  size_t global = ITEMS;
  return clEnqueueNDRangeKernel(s->q, s->spin, 1, NULL, &global, NULL, 0, NULL, ev);
}

static cl_int status_of(cl_event e) {
  cl_int st = 1;
  cl_int rc = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
  return rc == CL_SUCCESS ? st : rc;
}

/* Event callbacks: the status each was called with (1: not called yet). */
static volatile cl_int callback_status[2] = {1, 1};
static void CL_CALLBACK on_done(cl_event e, cl_int status, void* which) {
  (void)e;
  __atomic_store_n(&callback_status[(size_t)which], status, __ATOMIC_SEQ_CST);
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* A blocking read queued behind the long kernel, on a thread of its own. */
struct Reader {
  struct Setup* s;
  cl_int rc;
};
static void* blocking_read(void* arg) {
  struct Reader* r = arg;
  cl_uint out[ITEMS];
  r->rc = clEnqueueReadBuffer(r->s->q, r->s->buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  return NULL;
}

static int lost(void) {
  struct Setup s;
  if (!setup(&s)) return verdict();
  cl_event kernel, read;
  cl_uint out[ITEMS];
  check(launch(&s, 1000000000u, 1000u, &kernel) == CL_SUCCESS, "long kernel enqueued", 0);
  check(clEnqueueReadBuffer(s.q, s.buf, CL_FALSE, 0, sizeof out, out, 0, NULL, &read) == CL_SUCCESS,
        "read after it enqueued", 0);
  clSetEventCallback(kernel, CL_COMPLETE, on_done, (void*)0);
  clSetEventCallback(read, CL_COMPLETE, on_done, (void*)1);
  struct Reader reader = {&s, 1};
  pthread_t t;
  pthread_create(&t, NULL, blocking_read, &reader);
  clFlush(s.q);
  printf("enqueued\n");
  fflush(stdout);

  cl_int rc = clWaitForEvents(1, &kernel);
  check(rc != CL_SUCCESS, "clWaitForEvents on the kernel fails", rc);
  check(status_of(kernel) < 0, "the kernel's event has a negative status", status_of(kernel));
  rc = clWaitForEvents(1, &read);
  check(rc != CL_SUCCESS, "clWaitForEvents on the read fails", rc);
  check(status_of(read) < 0, "the read's event has a negative status", status_of(read));
  pthread_join(t, NULL);
  check(reader.rc != CL_SUCCESS, "the blocking read on another thread fails", reader.rc);
  /* Callbacks run on the ICD's own thread: give them a while, without hanging. */
  for (int i = 0; i < 300 && (callback_status[0] == 1 || callback_status[1] == 1); ++i) sleep_ms(100);
  check(callback_status[0] < 0, "the kernel's callback ran with a negative status", callback_status[0]);
  check(callback_status[1] < 0, "the read's callback ran with a negative status", callback_status[1]);
  rc = clFinish(s.q);
  check(rc != CL_SUCCESS, "clFinish fails", rc);

  /* Later calls. */
  cl_event again = NULL;
  rc = launch(&s, 1, 1, &again);
  check(rc != CL_SUCCESS || (again && status_of(again) < 0), "a later launch fails (now or in its event)", rc);
  if (again) {
    check(clWaitForEvents(1, &again) != CL_SUCCESS, "waiting for the later launch fails", 0);
    clReleaseEvent(again);
  }
  rc = clEnqueueReadBuffer(s.q, s.buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  check(rc != CL_SUCCESS, "a later blocking read fails", rc);
  cl_uint in[ITEMS] = {3, 4};
  rc = clEnqueueWriteBuffer(s.q, s.buf, CL_TRUE, 0, sizeof in, in, 0, NULL, NULL);
  check(rc != CL_SUCCESS, "a later blocking write fails", rc);
  cl_program p2 = clCreateProgramWithSource(s.ctx, 1, &kSource, NULL, &rc);
  if (rc == CL_SUCCESS) {
    rc = clBuildProgram(p2, 1, &s.device, "", NULL, NULL);
    clReleaseProgram(p2);
  }
  check(rc != CL_SUCCESS, "a later build fails", rc);
  rc = clFinish(s.q);
  check(rc != CL_SUCCESS, "a later clFinish fails", rc);

  /* Releasing everything neither crashes nor hangs. */
  clReleaseEvent(kernel);
  clReleaseEvent(read);
  clReleaseKernel(s.spin);
  clReleaseProgram(s.prog);
  clReleaseMemObject(s.buf);
  clReleaseCommandQueue(s.q);
  check(clReleaseContext(s.ctx) == CL_SUCCESS, "objects released", 0);
  return verdict();
}

static int slow(void) {
  struct Setup s;
  if (!setup(&s)) return verdict();
  const cl_uint n = 200000000u, rounds = 4;
  cl_event kernel;
  check(launch(&s, n, rounds, &kernel) == CL_SUCCESS, "slow kernel enqueued", 0);
  cl_int rc = clWaitForEvents(1, &kernel);
  check(rc == CL_SUCCESS && status_of(kernel) == CL_COMPLETE, "the slow kernel completes", rc);
  cl_uint out[ITEMS] = {0, 0};
  rc = clEnqueueReadBuffer(s.q, s.buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  check(rc == CL_SUCCESS, "read", rc);
  check(out[0] == spin_host(1, n, rounds) && out[1] == spin_host(2, n, rounds), "the result is right", 0);
  check(clFinish(s.q) == CL_SUCCESS, "clFinish", 0);
  clReleaseEvent(kernel);
  clReleaseKernel(s.spin);
  clReleaseProgram(s.prog);
  clReleaseMemObject(s.buf);
  clReleaseCommandQueue(s.q);
  clReleaseContext(s.ctx);
  return verdict();
}

static int list(void) {
  cl_uint n = 0;
  cl_int rc = clGetPlatformIDs(0, NULL, &n);
  check(rc == CL_SUCCESS && n > 0, "platforms offered", rc);
  cl_platform_id ids[16];
  if (n > 16) n = 16;
  if (n) clGetPlatformIDs(n, ids, NULL);
  for (cl_uint i = 0; i < n; ++i) {
    char name[256] = "";
    clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    cl_uint devices = 0;
    rc = clGetDeviceIDs(ids[i], CL_DEVICE_TYPE_ALL, 0, NULL, &devices);
    printf("platform: %s\n", name);
    check(rc == CL_SUCCESS && devices > 0, "the platform has devices", rc);
  }
  return verdict();
}

static int context_work(int expect_refused) {
  cl_platform_id p;
  cl_device_id d;
  cl_int rc = clGetPlatformIDs(1, &p, NULL);
  if (rc == CL_SUCCESS) rc = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  if (rc != CL_SUCCESS) return check(0, "a platform and a device", rc), verdict();
  cl_uint in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
  cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &rc);
  cl_command_queue q = NULL;
  cl_mem m = NULL;
  if (rc == CL_SUCCESS) q = clCreateCommandQueue(ctx, d, 0, &rc);
  if (rc == CL_SUCCESS) m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof in, NULL, &rc);
  if (rc == CL_SUCCESS) rc = clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof in, in, 0, NULL, NULL);
  if (rc == CL_SUCCESS) rc = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  if (expect_refused)
    check(rc != CL_SUCCESS, "work on the refused platform fails", rc);
  else
    check(rc == CL_SUCCESS && memcmp(in, out, sizeof in) == 0, "the platform serves: the data came back", rc);
  if (m) clReleaseMemObject(m);
  if (q) clReleaseCommandQueue(q);
  if (ctx) clReleaseContext(ctx);
  return verdict();
}

static int refused_later(const char* go) {
  cl_platform_id p;
  cl_device_id d;
  cl_int rc = clGetPlatformIDs(1, &p, NULL);
  if (rc == CL_SUCCESS) rc = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  cl_context ctx = rc == CL_SUCCESS ? clCreateContext(NULL, 1, &d, NULL, NULL, &rc) : NULL;
  cl_command_queue q = rc == CL_SUCCESS ? clCreateCommandQueue(ctx, d, 0, &rc) : NULL;
  cl_mem m = rc == CL_SUCCESS ? clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16, NULL, &rc) : NULL;
  if (rc == CL_SUCCESS) rc = clFinish(q);
  if (rc != CL_SUCCESS) return check(0, "a context, a queue and a buffer", rc), verdict();
  printf("ready\n");
  fflush(stdout);
  for (int i = 0; i < 1200; ++i) {
    FILE* f = fopen(go, "r");
    if (f) {
      fclose(f);
      break;
    }
    sleep_ms(50);
  }
  /* A read is answered by its code alone (a write's failure would come as a notice first). */
  cl_uint out[4];
  rc = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  check(rc != CL_SUCCESS, "a blocking read on the refused platform fails", rc);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return verdict();
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "lost")) return lost();
  if (!strcmp(mode, "slow")) return slow();
  if (!strcmp(mode, "list")) return list();
  if (!strcmp(mode, "refused")) return context_work(1);
  if (!strcmp(mode, "served")) return context_work(0);
  if (!strcmp(mode, "refused-later") && argc > 2) return refused_later(argv[2]);
  fprintf(stderr, "usage: opencl_faults lost|slow|list|refused|served|refused-later FILE\n");
  return 2;
}
