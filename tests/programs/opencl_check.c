/* An ordinary OpenCL program (linked with -lOpenCL, nothing of Outboard's): it uses the first
   platform the ICD loader offers and prints its results and the error codes it gets, one line each,
   so a run on PoCL directly and a run through Outboard's ICD can be compared line by line. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
static const char* kSource =
    "__kernel void axpy(float a, __global const float* x, __global float* y) {\n"
    "  size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n"
    "__kernel void sum_local(__global const int* in, __global int* out, __local int* scratch) {\n"
    "  size_t l = get_local_id(0), g = get_group_id(0);\n"
    "  scratch[l] = in[get_global_id(0)]; barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (l == 0) { int s = 0; for (size_t i = 0; i < get_local_size(0); ++i) s += scratch[i]; out[g] = s; } }\n";

static int callbacks_seen = 0;
static void CL_CALLBACK on_complete(cl_event e, cl_int status, void* data) {
  (void)e;
  *(int*)data = status == CL_COMPLETE ? 1 : -1;
  __atomic_add_fetch(&callbacks_seen, 1, __ATOMIC_SEQ_CST);
}

#define SHOW(what, rc) printf("%s: %d\n", what, (int)(rc))

int main(void) {
  cl_platform_id platform;
  cl_uint n = 0;
  cl_int rc = clGetPlatformIDs(1, &platform, &n);
  SHOW("platforms", rc);
  if (rc != CL_SUCCESS || n == 0) return 1;
  cl_device_id device;
  SHOW("devices", clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  SHOW("context", rc);
  cl_command_queue q = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &rc);
  SHOW("queue", rc);

  float x[N], y[N], out[N];
  for (int i = 0; i < N; ++i) x[i] = (float)i, y[i] = 1.0f;
  cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &rc);
  SHOW("buffer x", rc);
  cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof y, NULL, &rc);
  SHOW("buffer y", rc);
  SHOW("write y", clEnqueueWriteBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL));
  SHOW("bad size buffer", (clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &rc), rc));

  cl_program bad = clCreateProgramWithSource(ctx, 1, &(const char*){"__kernel void f( {"}, NULL, &rc);
  SHOW("bad program", rc);
  SHOW("bad build", clBuildProgram(bad, 1, &device, "", NULL, NULL));
  size_t log_size = 0;
  SHOW("build log", clGetProgramBuildInfo(bad, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size));
  printf("build log non-empty: %d\n", log_size > 1);
  clReleaseProgram(bad);

  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, NULL, &rc);
  SHOW("program", rc);
  SHOW("build", clBuildProgram(prog, 1, &device, "-cl-std=CL1.2", NULL, NULL));
  cl_uint kernels = 0;
  SHOW("num kernels", clGetProgramInfo(prog, CL_PROGRAM_NUM_KERNELS, sizeof(size_t), &(size_t){0}, NULL));
  SHOW("kernels in program", clCreateKernelsInProgram(prog, 0, NULL, &kernels));
  printf("kernel count: %u\n", kernels);
  clCreateKernel(prog, "nope", &rc);
  SHOW("unknown kernel", rc);
  cl_kernel axpy = clCreateKernel(prog, "axpy", &rc);
  SHOW("kernel", rc);
  cl_uint nargs = 0;
  clGetKernelInfo(axpy, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
  printf("axpy args: %u\n", nargs);
  size_t wg = 0;
  SHOW("work group info", clGetKernelWorkGroupInfo(axpy, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  float a = 2.0f;
  SHOW("arg index", clSetKernelArg(axpy, 3, sizeof a, &a));
  SHOW("arg 0", clSetKernelArg(axpy, 0, sizeof a, &a));
  SHOW("arg 1", clSetKernelArg(axpy, 1, sizeof bx, &bx));
  size_t global = N;
  SHOW("launch unset arg", clEnqueueNDRangeKernel(q, axpy, 1, NULL, &global, NULL, 0, NULL, NULL));
  SHOW("arg 2", clSetKernelArg(axpy, 2, sizeof by, &by));

  // A user event gates the launch; its callback and profiling after.
  cl_event gate = clCreateUserEvent(ctx, &rc);
  SHOW("user event", rc);
  cl_event run;
  SHOW("launch", clEnqueueNDRangeKernel(q, axpy, 1, NULL, &global, NULL, 1, &gate, &run));
  int flag = 0;
  SHOW("callback", clSetEventCallback(run, CL_COMPLETE, on_complete, &flag));
  cl_int status = 0;
  clGetEventInfo(run, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  printf("gated still pending: %d\n", status > CL_COMPLETE);
  SHOW("set user event", clSetUserEventStatus(gate, CL_COMPLETE));
  SHOW("wait", clWaitForEvents(1, &run));
  cl_ulong t0 = 0, t1 = 0;
  clGetEventProfilingInfo(run, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  SHOW("profiling", clGetEventProfilingInfo(run, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
  printf("profile ordered: %d\n", t1 >= t0 && t0 > 0);

  SHOW("read", clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  int ok = 1;
  for (int i = 0; i < N; ++i) ok &= out[i] == 2.0f * i + 1.0f;
  printf("axpy correct: %d\n", ok);
  SHOW("read out of bounds", clEnqueueReadBuffer(q, by, CL_TRUE, 8, sizeof out, out, 0, NULL, NULL));

  // Non-blocking read, then a marker; clFinish makes the data land.
  float half[N / 2];
  cl_event marker;
  SHOW("read async", clEnqueueReadBuffer(q, by, CL_FALSE, sizeof out / 2, sizeof half, half, 0, NULL, NULL));
  SHOW("marker", clEnqueueMarkerWithWaitList(q, 0, NULL, &marker));
  SHOW("finish", clFinish(q));
  printf("async read correct: %d\n", half[0] == 2.0f * (N / 2) + 1.0f && half[N / 2 - 1] == 2.0f * (N - 1) + 1.0f);

  // Fill, copy, rect read, map/unmap, sub-buffer.
  int pattern = 7, ints[N], sums[N / 64];
  cl_mem bi = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof ints, NULL, &rc);
  SHOW("fill", clEnqueueFillBuffer(q, bi, &pattern, sizeof pattern, 0, sizeof ints, 0, NULL, NULL));
  cl_mem bc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof ints, NULL, &rc);
  SHOW("copy", clEnqueueCopyBuffer(q, bi, bc, 0, 0, sizeof ints, 0, NULL, NULL));
  int* mapped = clEnqueueMapBuffer(q, bc, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, sizeof ints, 0, NULL, NULL, &rc);
  SHOW("map", rc);
  printf("mapped value: %d\n", mapped ? mapped[N - 1] : -1);
  for (int i = 0; i < N; ++i) mapped[i] = i;
  SHOW("unmap", clEnqueueUnmapMemObject(q, bc, mapped, 0, NULL, NULL));
  size_t origin[3] = {16, 2, 0}, host[3] = {0, 0, 0}, region[3] = {32, 3, 1};
  char rect[96];
  SHOW("read rect", clEnqueueReadBufferRect(q, bc, CL_TRUE, origin, host, region, 256, 0, 32, 0, rect, 0, NULL, NULL));
  int* r0 = (int*)rect;
  printf("rect values: %d %d\n", r0[0], ((int*)(rect + 64))[7]);
  cl_buffer_region sub = {1024, 1024};
  cl_mem bs = clCreateSubBuffer(bc, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &sub, &rc);
  SHOW("sub-buffer", rc);
  int first = 0;
  SHOW("read sub", clEnqueueReadBuffer(q, bs, CL_TRUE, 0, sizeof first, &first, 0, NULL, NULL));
  printf("sub value: %d\n", first);

  cl_kernel sum = clCreateKernel(prog, "sum_local", &rc);
  cl_mem bsum = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof sums, NULL, &rc);
  clSetKernelArg(sum, 0, sizeof bc, &bc);
  clSetKernelArg(sum, 1, sizeof bsum, &bsum);
  SHOW("local arg", clSetKernelArg(sum, 2, 64 * sizeof(int), NULL));
  size_t local = 64;
  SHOW("bad local size", clEnqueueNDRangeKernel(q, sum, 1, NULL, &global, &(size_t){100}, 0, NULL, NULL));
  SHOW("launch local", clEnqueueNDRangeKernel(q, sum, 1, NULL, &global, &local, 0, NULL, NULL));
  SHOW("read sums", clEnqueueReadBuffer(q, bsum, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL));
  printf("sums: %d %d\n", sums[0], sums[N / 64 - 1]);

  // Binaries back, and a program made from them.
  size_t bin_size = 0;
  SHOW("binary sizes", clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size, NULL));
  unsigned char* bin = malloc(bin_size);
  SHOW("binaries", clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
  cl_int bin_status = 1;
  cl_program from_bin = clCreateProgramWithBinary(ctx, 1, &device, &bin_size, (const unsigned char**)&bin, &bin_status, &rc);
  SHOW("program from binary", rc);
  SHOW("binary status", bin_status);
  SHOW("build binary", clBuildProgram(from_bin, 1, &device, NULL, NULL, NULL));
  cl_kernel axpy2 = clCreateKernel(from_bin, "axpy", &rc);
  SHOW("kernel from binary", rc);
  clSetKernelArg(axpy2, 0, sizeof a, &a);
  clSetKernelArg(axpy2, 1, sizeof bx, &bx);
  clSetKernelArg(axpy2, 2, sizeof by, &by);
  SHOW("launch binary", clEnqueueNDRangeKernel(q, axpy2, 1, NULL, &global, NULL, 0, NULL, NULL));
  SHOW("read again", clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  printf("second axpy: %g %g\n", out[0], out[N - 1]);
  free(bin);

  SHOW("finish", clFinish(q));
  printf("callback ran: %d (flag %d)\n", callbacks_seen, flag);
  clReleaseEvent(run);
  clReleaseEvent(gate);
  clReleaseEvent(marker);
  clReleaseKernel(axpy);
  clReleaseKernel(axpy2);
  clReleaseKernel(sum);
  clReleaseProgram(prog);
  clReleaseProgram(from_bin);
  clReleaseMemObject(bs);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseMemObject(bi);
  clReleaseMemObject(bc);
  clReleaseMemObject(bsum);
  SHOW("release queue", clReleaseCommandQueue(q));
  SHOW("release context", clReleaseContext(ctx));
  return 0;
}
