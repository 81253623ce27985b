/* NVIDIA's OpenCL (driver 580.159.04, H200) corrupts its process's heap when it builds a kernel
 * whose name is longer than 256 characters: the build succeeds, the next allocation aborts
 * ("free(): invalid next size", "malloc(): invalid size"). Found by OpenCL-CTS test_compiler
 * kernel_name_size through Outboard (the server, where the build runs, died with it); the CTS
 * run directly survives by chance. This program (linked with -lOpenCL only) shows it without Outboard:
 *   cl_long_kernel_name 256   # ok
 *   cl_long_kernel_name 300   # aborts on NVIDIA's OpenCL; ok on PoCL 3.1
 * Through Outboard the server refuses such a build on NVIDIA (backends/opencl/native_quirks.hpp):
 * the build fails with CL_BUILD_PROGRAM_FAILURE and a log that says why. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  const int len = argc > 1 ? atoi(argv[1]) : 300;
  cl_platform_id p;
  cl_device_id d;
  cl_int rc;
  clGetPlatformIDs(1, &p, NULL);
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &rc);
  char* name = malloc(len + 1);
  for (int i = 0; i < len; ++i) name[i] = 'a' + i % 26;
  name[len] = 0;
  char* src = malloc(len + 100);
  sprintf(src, "__kernel void %s(__global int* dst, int src) { dst[0] = src; }", name);
  const char* s = src;
  cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &rc);
  const cl_int built = clBuildProgram(prog, 1, &d, "-cl-std=CL3.0", NULL, NULL);
  printf("build: %d\n", built);
  if (built != CL_SUCCESS) { /* through Outboard on NVIDIA: refused, the log says why */
    char log[1024] = "";
    clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("log: %s\n", log);
  }
  size_t names = 0;  /* the first allocation after the build: where the corruption shows */
  clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &names);
  cl_kernel k = clCreateKernel(prog, name, &rc);
  printf("kernel of a %d-character name: %d\n", len, rc);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  return 0;
}
