/* What the large-transfer test programs (opencl_bulk.c, opencl_queued.c) share: their device,
   one line per check, and the byte pattern they move (different for each seed and place).
   Included after <CL/cl.h>. */
#ifndef OPENCL_BYTES_H
#define OPENCL_BYTES_H
#include <stdint.h>
#include <stdio.h>

/* The first device of the first platform; 0 (and a message) when there is none. */
static int first_device(cl_device_id* device) {
  cl_platform_id platform;
  if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, device, NULL) != CL_SUCCESS) {
    fprintf(stderr, "no OpenCL device\n");
    return 0;
  }
  return 1;
}

static int passed = 0, failed = 0;

static void check(int ok, const char* what) {
  if (ok) ++passed;
  else ++failed;
  printf("%s: %s\n", what, ok ? "ok" : "FAILED");
}

/* The last line, "NAME: N passed, M failed"; the exit status. */
static int verdict(const char* name) {
  printf("%s: %d passed, %d failed\n", name, passed, failed);
  return failed ? 1 : 0;
}

static uint8_t pattern(size_t i, unsigned seed) { return (uint8_t)((i * 2654435761u + seed * 40503u) >> 13); }

static void fill(uint8_t* p, size_t n, size_t first, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = pattern(first + i, seed);
}

#endif
