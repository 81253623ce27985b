/* An ordinary OpenCL program (linked with -lOpenCL only) that moves large buffers: several MiB,
   odd sizes and offsets, sub-buffers, blocking and non-blocking transfers with events (a kernel
   and a callback behind them), reads into memory never touched before, maps for reading and
   writing, and a rectangle read. Each check prints one line (a checksum of what arrived, or the
   first wrong byte), so runs on PoCL directly and through Outboard compare line for line; the
   last line is "opencl_bulk: N passed, M failed". */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "opencl_bytes.h"

/* Whether p[0, n) holds the pattern from `first` on; prints a checksum either way. */
static int holds(const char* what, const uint8_t* p, size_t n, size_t first, unsigned seed) {
  uint64_t sum = 0;
  size_t bad = n;
  for (size_t i = 0; i < n; ++i) {
    sum = sum * 31 + p[i];
    if (bad == n && p[i] != pattern(first + i, seed)) bad = i;
  }
  printf("%s: %zu bytes, checksum %016llx%s\n", what, n, (unsigned long long)sum, bad == n ? "" : " (wrong)");
  if (bad != n) printf("  first wrong byte at %zu\n", bad);
  return bad == n;
}

static void CL_CALLBACK noted(cl_event e, cl_int status, void* data) {
  (void)e;
  *(volatile cl_int*)data = status == CL_COMPLETE ? 1 : -1;
}

int main(void) {
  cl_device_id device;
  cl_int rc;
  if (!first_device(&device)) return 1;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &rc);
  const size_t big = (size_t)24 << 20;        /* 24 MiB */
  const size_t odd = ((size_t)5 << 20) + 4097; /* not a multiple of anything */
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, NULL, &rc);
  check(rc == CL_SUCCESS, "create 24 MiB buffer");
  uint8_t* host = malloc(big);
  uint8_t* back = malloc(big);

  /* Blocking write, then blocking read of the whole buffer. */
  fill(host, big, 0, 1);
  check(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, big, host, 0, NULL, NULL) == CL_SUCCESS, "blocking write 24 MiB");
  memset(back, 0, big);
  check(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, big, back, 0, NULL, NULL) == CL_SUCCESS, "blocking read 24 MiB");
  check(holds("read 24 MiB", back, big, 0, 1), "24 MiB round trip");

  /* Odd size at an odd offset, both ways. */
  fill(host, odd, 0, 2);
  check(clEnqueueWriteBuffer(q, buf, CL_TRUE, 12345, odd, host, 0, NULL, NULL) == CL_SUCCESS, "write odd size at offset");
  memset(back, 0, big);
  check(clEnqueueReadBuffer(q, buf, CL_TRUE, 12345, odd, back + 3, 0, NULL, NULL) == CL_SUCCESS, "read odd size at offset");
  check(holds("odd size at offset", back + 3, odd, 0, 2), "odd size and offsets");
  /* The bytes around it are the first write's. */
  check(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 12345, back, 0, NULL, NULL) == CL_SUCCESS, "read before it");
  check(holds("before the odd write", back, 12345, 0, 1), "untouched before");
  check(clEnqueueReadBuffer(q, buf, CL_TRUE, 12345 + odd, big - 12345 - odd, back, 0, NULL, NULL) == CL_SUCCESS,
        "read after it");
  check(holds("after the odd write", back, big - 12345 - odd, 12345 + odd, 1), "untouched after");

  /* Into memory never touched (fresh pages). */
  uint8_t* fresh = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 12345, fresh, 0, NULL, NULL) == CL_SUCCESS &&
            clEnqueueReadBuffer(q, buf, CL_TRUE, 12345, odd, fresh + 12345, 0, NULL, NULL) == CL_SUCCESS,
        "read into fresh pages");
  check(holds("fresh pages", fresh + 12345, odd, 0, 2), "fresh pages hold the data");
  munmap(fresh, big);

  /* A sub-buffer: written through it, read through its parent. */
  cl_uint align_bits = 0;
  clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
  size_t origin = ((size_t)3 << 20) + 1024;
  if (align_bits / 8 > 1) origin = origin / (align_bits / 8) * (align_bits / 8);
  cl_buffer_region region = {origin, (size_t)9 << 20};
  cl_mem sub = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
  check(rc == CL_SUCCESS, "create sub-buffer");
  fill(host, region.size, 0, 3);
  check(clEnqueueWriteBuffer(q, sub, CL_TRUE, 0, region.size, host, 0, NULL, NULL) == CL_SUCCESS, "write sub-buffer");
  check(clEnqueueReadBuffer(q, buf, CL_TRUE, origin, region.size, back, 0, NULL, NULL) == CL_SUCCESS,
        "read the parent");
  check(holds("sub-buffer through its parent", back, region.size, 0, 3), "sub-buffer");
  check(clEnqueueReadBuffer(q, sub, CL_TRUE, 4096, ((size_t)2 << 20) + 7, back, 0, NULL, NULL) == CL_SUCCESS,
        "read the sub-buffer at an offset");
  check(holds("sub-buffer at an offset", back, ((size_t)2 << 20) + 7, 4096, 3), "sub-buffer offset");

  /* Non-blocking: write, a kernel that adds 1 to every byte, read; events and a callback. */
  const char* src = "__kernel void inc(__global uchar* p) { size_t i = get_global_id(0); p[i] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &rc);
  check(clBuildProgram(prog, 1, &device, "", NULL, NULL) == CL_SUCCESS, "build");
  cl_kernel inc = clCreateKernel(prog, "inc", &rc);
  clSetKernelArg(inc, 0, sizeof buf, &buf);
  fill(host, big, 0, 4);
  cl_event wrote, ran, read;
  check(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, big, host, 0, NULL, &wrote) == CL_SUCCESS, "non-blocking write");
  check(clEnqueueNDRangeKernel(q, inc, 1, NULL, &big, NULL, 1, &wrote, &ran) == CL_SUCCESS, "kernel behind it");
  memset(back, 0, big);
  volatile cl_int called = 0;
  check(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, big, back, 1, &ran, &read) == CL_SUCCESS, "non-blocking read");
  clSetEventCallback(read, CL_COMPLETE, noted, (void*)&called);
  check(clWaitForEvents(1, &read) == CL_SUCCESS, "wait for the read");
  cl_int status = 0;
  clGetEventInfo(wrote, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  check(status == CL_COMPLETE, "the write's event is complete");
  {
    size_t bad = big;
    for (size_t i = 0; i < big && bad == big; ++i)
      if (back[i] != (uint8_t)(pattern(i, 4) + 1)) bad = i;
    printf("non-blocking chain: %s\n", bad == big ? "every byte + 1" : "wrong");
    check(bad == big, "non-blocking write, kernel, read");
  }
  clFinish(q);
  for (int i = 0; i < 200 && !called; ++i) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  check(called == 1, "the read's callback ran");
  clReleaseEvent(wrote);
  clReleaseEvent(ran);
  clReleaseEvent(read);

  /* Several non-blocking reads at once into one array, then clFinish. */
  fill(host, big, 0, 5);
  check(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, big, host, 0, NULL, NULL) == CL_SUCCESS, "write for the split reads");
  memset(back, 0, big);
  for (int k = 0; k < 4; ++k)
    clEnqueueReadBuffer(q, buf, CL_FALSE, (size_t)k * (big / 4), big / 4, back + (size_t)k * (big / 4), 0, NULL, NULL);
  check(clFinish(q) == CL_SUCCESS, "finish after 4 reads");
  check(holds("4 non-blocking reads", back, big, 0, 5), "split reads");

  /* Map for reading, then for writing (the unmap writes back). */
  cl_int mrc;
  uint8_t* m = clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ, 1 << 20, (size_t)6 << 20, 0, NULL, NULL, &mrc);
  check(mrc == CL_SUCCESS && m, "map for reading");
  if (m) {
    check(holds("mapped for reading", m, (size_t)6 << 20, 1 << 20, 5), "map read");
    clEnqueueUnmapMemObject(q, buf, m, 0, NULL, NULL);
  }
  m = clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, (size_t)7 << 20, 0, NULL, NULL, &mrc);
  check(mrc == CL_SUCCESS && m, "map for writing");
  if (m) {
    fill(m, (size_t)7 << 20, 0, 6);
    check(clEnqueueUnmapMemObject(q, buf, m, 0, NULL, NULL) == CL_SUCCESS, "unmap writes back");
    memset(back, 0, big);
    check(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, (size_t)7 << 20, back, 0, NULL, NULL) == CL_SUCCESS, "read it");
    check(holds("written through a map", back, (size_t)7 << 20, 0, 6), "map write");
  }

  /* A rectangle read of 2 MiB rows. */
  {
    size_t bo[3] = {64, 1, 0}, ho[3] = {0, 0, 0}, reg[3] = {(size_t)2 << 20, 3, 1};
    const size_t row = (size_t)4 << 20;
    memset(back, 0, big);
    check(clEnqueueReadBufferRect(q, buf, CL_TRUE, bo, ho, reg, row, 0, 0, 0, back, 0, NULL, NULL) == CL_SUCCESS,
          "rectangle read");
    int good = 1;
    for (size_t y = 0; y < 3; ++y) {
      const size_t first = 64 + (1 + y) * row;
      char what[64];
      snprintf(what, sizeof what, "rectangle row %zu", y);
      /* Rows below 7 MiB were written through the map (seed 6), the rest by the split reads' write. */
      if (first + reg[0] <= ((size_t)7 << 20)) good &= holds(what, back + y * reg[0], reg[0], first, 6);
      else if (first >= ((size_t)7 << 20)) good &= holds(what, back + y * reg[0], reg[0], first, 5);
    }
    check(good, "rectangle rows");
  }

  clReleaseKernel(inc);
  clReleaseProgram(prog);
  clReleaseMemObject(sub);
  clReleaseMemObject(buf);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  free(host);
  free(back);
  return verdict("opencl_bulk");
}
