/* An ordinary OpenCL program (built with -lOpenCL, nothing of Outboard's) that splits one
 * compute-bound job over every GPU it sees, on any platform: a hash search. Item i of [0, N) is
 * hashed with R rounds of a 64-bit mixer; the answer is the smallest hash and its item. Each
 * device takes an equal share, one kernel; each work-group writes its best pair; the host keeps
 * the best of all. Run with one device and with all of them: the same answer, and the time.
 *   cl_multi [--devices K] [--items N] [--rounds R] [--type gpu|all] [--list]
 *   --devices K  use the first K devices found (default: all)   --items N  default 2^26
 *   --rounds R   mixer rounds per item (default 2048)           --type     GPUs only (default) or
 *                every device
 * Output: "cl_multi devices=K items=N rounds=R seconds=S gitems_per_s=G best=H index=I check=ok";
 * check: the best is recomputed on the host, and so is the best of a sample of work-groups.
 * Exit 1 on a wrong result or an OpenCL error. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GROUP 256
#define MAX_DEVICES 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(call)                                                                  \
  do {                                                                               \
    cl_int err_ = (call);                                                            \
    if (err_ != CL_SUCCESS) {                                                        \
      fprintf(stderr, "cl_multi: %s failed: %d (line %d)\n", #call, err_, __LINE__); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static const char* kSource =
    "ulong mix(ulong x, uint rounds) {\n"
    "  ulong h = x;\n"
    "  for (uint r = 0; r < rounds; ++r) {\n"
    "    h ^= h >> 33; h *= 0xff51afd7ed558ccdUL; h ^= h >> 29; h += r;\n"
    "  }\n"
    "  return h;\n"
    "}\n"
    "kernel void search(ulong first, ulong count, uint rounds, global ulong* best) {\n"
    "  local ulong h[256]; local ulong at[256];\n"
    "  size_t l = get_local_id(0), g = get_global_id(0);\n"
    "  ulong i = first + g;\n"
    "  h[l] = g < count ? mix(i, rounds) : ~0UL; at[l] = i;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t s = 128; s > 0; s >>= 1) {\n"
    "    if (l < s && (h[l + s] < h[l] || (h[l + s] == h[l] && at[l + s] < at[l]))) { h[l] = h[l + s]; at[l] = at[l + s]; }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) { best[2 * get_group_id(0)] = h[0]; best[2 * get_group_id(0) + 1] = at[0]; }\n"
    "}\n";

static uint64_t mix(uint64_t x, unsigned rounds) {
  uint64_t h = x;
  for (unsigned r = 0; r < rounds; ++r) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
    h += r;
  }
  return h;
}

struct Part {
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  cl_kernel kernel;
  cl_mem best;
  uint64_t first, count;
  size_t groups;
  uint64_t* results;  // 2 per group
};

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  unsigned want = 0, rounds = 2048;
  uint64_t items = 1ull << 26;
  cl_device_type type = CL_DEVICE_TYPE_GPU;
  int list = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--devices") && i + 1 < argc) want = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--items") && i + 1 < argc) items = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--type") && i + 1 < argc) type = strcmp(argv[++i], "all") ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
    else if (!strcmp(argv[i], "--list")) list = 1;
    else return fprintf(stderr, "usage: cl_multi [--devices K] [--items N] [--rounds R] [--type gpu|all] [--list]\n"), 2;
  }
  if (items == 0 || rounds == 0) return fprintf(stderr, "cl_multi: --items and --rounds must be positive\n"), 2;
  /* Every device of the type, platform by platform. */
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(0, NULL, &np));
  cl_platform_id platforms[16];
  if (np > 16) np = 16;
  CHECK(clGetPlatformIDs(np, platforms, NULL));
  struct Part parts[MAX_DEVICES];
  unsigned n = 0;
  for (cl_uint p = 0; p < np && n < MAX_DEVICES; ++p) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(platforms[p], type, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
    cl_device_id devices[MAX_DEVICES];
    if (nd > MAX_DEVICES - n) nd = MAX_DEVICES - n;
    CHECK(clGetDeviceIDs(platforms[p], type, nd, devices, NULL));
    for (cl_uint d = 0; d < nd; ++d) {
      char name[256] = "", pname[256] = "";
      clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof name, name, NULL);
      clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
      if (list) printf("device %u: %s (platform %s)\n", n, name, pname);
      parts[n++].device = devices[d];
    }
  }
  if (list) return 0;
  if (n == 0) return fprintf(stderr, "cl_multi: no device of that type\n"), 1;
  if (want && want < n) n = want;
  /* Each device: its context, queue, program and share of the items (set up before timing). */
  for (unsigned k = 0; k < n; ++k) {
    struct Part* t = &parts[k];
    cl_int err;
    t->context = clCreateContext(NULL, 1, &t->device, NULL, NULL, &err);
    CHECK(err);
    t->queue = clCreateCommandQueue(t->context, t->device, 0, &err);
    CHECK(err);
    cl_program program = clCreateProgramWithSource(t->context, 1, &kSource, NULL, &err);
    CHECK(err);
    if (clBuildProgram(program, 1, &t->device, "", NULL, NULL) != CL_SUCCESS) {
      char log[4096] = "";
      clGetProgramBuildInfo(program, t->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
      return fprintf(stderr, "cl_multi: build failed: %s\n", log), 1;
    }
    t->kernel = clCreateKernel(program, "search", &err);
    CHECK(err);
    clReleaseProgram(program);
    t->first = items / n * k;
    t->count = k + 1 == n ? items - t->first : items / n;
    t->groups = (size_t)((t->count + GROUP - 1) / GROUP);
    t->best = clCreateBuffer(t->context, CL_MEM_WRITE_ONLY, t->groups * 2 * sizeof(uint64_t), NULL, &err);
    CHECK(err);
    t->results = malloc(t->groups * 2 * sizeof(uint64_t));
    if (!t->results) return fprintf(stderr, "cl_multi: out of memory\n"), 1;
    cl_ulong first = t->first, count = t->count;
    cl_uint r = rounds;
    CHECK(clSetKernelArg(t->kernel, 0, sizeof first, &first));
    CHECK(clSetKernelArg(t->kernel, 1, sizeof count, &count));
    CHECK(clSetKernelArg(t->kernel, 2, sizeof r, &r));
    CHECK(clSetKernelArg(t->kernel, 3, sizeof t->best, &t->best));
  }
  /* Every device's kernel and read are queued before any is waited for. */
  const double t0 = now();
  for (unsigned k = 0; k < n; ++k) {
    struct Part* t = &parts[k];
    const size_t global = t->groups * GROUP, local = GROUP;
    CHECK(clEnqueueNDRangeKernel(t->queue, t->kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(t->queue, t->best, CL_FALSE, 0, t->groups * 2 * sizeof(uint64_t), t->results, 0, NULL, NULL));
    CHECK(clFlush(t->queue));
  }
  for (unsigned k = 0; k < n; ++k) CHECK(clFinish(parts[k].queue));
  const double seconds = now() - t0;
  uint64_t best = ~0ull, index = 0;
  for (unsigned k = 0; k < n; ++k)
    for (size_t g = 0; g < parts[k].groups; ++g) {
      const uint64_t h = parts[k].results[2 * g], at = parts[k].results[2 * g + 1];
      if (h < best || (h == best && at < index)) best = h, index = at;
    }
  /* The answer recomputed, and a sample of work-groups searched again on the host. */
  int ok = index < items && mix(index, rounds) == best;
  for (unsigned k = 0; k < n && ok; ++k)
    for (size_t s = 0; s < 4; ++s) {
      const size_t g = (size_t)((parts[k].groups - 1) * s / 3);
      uint64_t h = ~0ull, at = 0;
      for (uint64_t j = 0; j < GROUP && g * GROUP + j < parts[k].count; ++j) {
        const uint64_t i = parts[k].first + g * GROUP + j, x = mix(i, rounds);
        if (x < h) h = x, at = i;
      }
      ok &= parts[k].results[2 * g] == h && parts[k].results[2 * g + 1] == at;
    }
  printf("cl_multi devices=%u items=%" PRIu64 " rounds=%u seconds=%.4f gitems_per_s=%.4f best=%016" PRIx64
         " index=%" PRIu64 " check=%s\n",
         n, items, rounds, seconds, items / seconds / 1e9, best, index, ok ? "ok" : "WRONG");
  for (unsigned k = 0; k < n; ++k) {
    clReleaseMemObject(parts[k].best);
    clReleaseKernel(parts[k].kernel);
    clReleaseCommandQueue(parts[k].queue);
    clReleaseContext(parts[k].context);
    free(parts[k].results);
  }
  return ok ? 0 : 1;
}
