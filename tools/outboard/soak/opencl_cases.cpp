// OpenCL cases, through the process's OpenCL ICD loader (Outboard's ICD shows the server's
// platforms): one context, queue and program per process on the first device of the first
// platform; each round creates two buffers (written, or filled at creation), runs a small integer
// kernel, reads the result back (or maps it), checks every element exactly and releases the
// buffers; now and then a fresh kernel object or queue is made and released. Buffers of 1 MiB and
// more take the server's copy lanes.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "tools/outboard/soak/cases.hpp"

namespace outboard::soak {
namespace {

// The NDRange is the element count rounded up to kGlobalStep, the kernel skipping the excess:
// buffers keep any size, while the launches take few shapes. PoCL (3.1) compiles and keeps loaded
// a work-group function per distinct launch shape (about 3 mappings each, up to one per local
// size): random shapes would fill that cache for the whole run and look like a leak of ours.
constexpr size_t kGlobalStep = 4096;
const char* kSource =
    "__kernel void soak(__global const uint* x, __global uint* y, uint a, uint salt, uint n) {\n"
    "  size_t i = get_global_id(0); if (i < n) y[i] = a * x[i] + (y[i] ^ salt) + (uint)i; }\n";

struct State {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_device_id device = nullptr;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  int platforms = 0;
  uint64_t rounds = 0;
};
State g;

void check(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) throw std::runtime_error(std::string(what) + " returned " + std::to_string(rc));
}

// A buffer released with the round, also when the round fails.
struct Mem {
  cl_mem m = nullptr;
  ~Mem() {
    if (m) clReleaseMemObject(m);
  }
};
// The process's kernel or queue, or one of the round's own (released with it).
struct Kernel {
  cl_kernel k = nullptr;
  bool own = false;
  ~Kernel() {
    if (own && k) clReleaseKernel(k);
  }
};
struct Queue {
  cl_command_queue q = nullptr;
  bool own = false;
  ~Queue() {
    if (own && q) clReleaseCommandQueue(q);
  }
};

void round(Context& c) {
  const int r = kOpenCl;
  const size_t count = c.large() ? c.uniform(1 << 18, 1 << 20) : c.uniform(1, 1 << 16), bytes = count * 4;
  std::vector<cl_uint> x(count), y(count), out(count);
  for (size_t i = 0; i < count; ++i) x[i] = static_cast<cl_uint>(c.rng()), y[i] = static_cast<cl_uint>(c.rng());
  const cl_uint a = static_cast<cl_uint>(c.rng()), salt = static_cast<cl_uint>(c.rng());
  const uint64_t n = ++g.rounds;
  Queue q{g.queue, false};
  cl_int rc = CL_SUCCESS;
  if (n % 25 == 0) {  // a queue of the round's own
    q.q = clCreateCommandQueueWithProperties(g.context, g.device, nullptr, &rc);
    q.own = true;
    check(rc, "clCreateCommandQueueWithProperties");
  }
  Kernel k{g.kernel, false};
  if (n % 10 == 0) {  // a kernel object of the round's own
    k.k = clCreateKernel(g.program, "soak", &rc);
    k.own = true;
    check(rc, "clCreateKernel");
  }
  const bool at_creation = c.uniform(0, 2) == 0, map = c.uniform(0, 3) == 0;
  Mem bx, by;
  bx.m = clCreateBuffer(g.context, CL_MEM_READ_ONLY, bytes, nullptr, &rc);
  check(rc, "clCreateBuffer");
  by.m = clCreateBuffer(g.context, CL_MEM_READ_WRITE | (at_creation ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                        at_creation ? y.data() : nullptr, &rc);
  check(rc, "clCreateBuffer");
  check(clEnqueueWriteBuffer(q.q, bx.m, CL_FALSE, 0, bytes, x.data(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
  if (!at_creation)
    check(clEnqueueWriteBuffer(q.q, by.m, CL_FALSE, 0, bytes, y.data(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
  check(clSetKernelArg(k.k, 0, sizeof(cl_mem), &bx.m), "clSetKernelArg");
  check(clSetKernelArg(k.k, 1, sizeof(cl_mem), &by.m), "clSetKernelArg");
  check(clSetKernelArg(k.k, 2, sizeof a, &a), "clSetKernelArg");
  check(clSetKernelArg(k.k, 3, sizeof salt, &salt), "clSetKernelArg");
  const cl_uint n_elements = static_cast<cl_uint>(count);
  check(clSetKernelArg(k.k, 4, sizeof n_elements, &n_elements), "clSetKernelArg");
  const size_t global = (count + kGlobalStep - 1) / kGlobalStep * kGlobalStep;
  c.tally.call(r);
  check(clEnqueueNDRangeKernel(q.q, k.k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
  c.tally.opencl(g.platforms, 1);
  if (map) {
    void* p = clEnqueueMapBuffer(q.q, by.m, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &rc);
    check(rc, "clEnqueueMapBuffer");
    std::memcpy(out.data(), p, bytes);
    check(clEnqueueUnmapMemObject(q.q, by.m, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    check(clFinish(q.q), "clFinish");
  } else {
    check(clEnqueueReadBuffer(q.q, by.m, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
  }
  size_t bad = 0, first = count;
  for (size_t i = 0; i < count; ++i)
    if (out[i] != a * x[i] + (y[i] ^ salt) + static_cast<cl_uint>(i)) {
      ++bad;
      first = std::min(first, i);
    }
  std::string what = "opencl round of " + std::to_string(bytes) + " bytes" + (at_creation ? ", filled at creation" : "") +
                     (map ? ", mapped back" : "");
  if (bad) what += ": " + std::to_string(bad) + " elements wrong, the first at " + std::to_string(first);
  c.tally.checked(r, bad ? INFINITY : 0, what);
}

}  // namespace

std::vector<Case> opencl_cases(Context& c) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    c.tally.opencl(0, 0);
    return {};
  }
  g.platforms = static_cast<int>(count);
  c.tally.opencl(g.platforms, 0);
  try {
    cl_platform_id platform;
    check(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &g.device, nullptr), "clGetDeviceIDs");
    cl_int rc;
    g.context = clCreateContext(nullptr, 1, &g.device, nullptr, nullptr, &rc);
    check(rc, "clCreateContext");
    g.queue = clCreateCommandQueueWithProperties(g.context, g.device, nullptr, &rc);
    check(rc, "clCreateCommandQueueWithProperties");
    g.program = clCreateProgramWithSource(g.context, 1, &kSource, nullptr, &rc);
    check(rc, "clCreateProgramWithSource");
    check(clBuildProgram(g.program, 1, &g.device, "", nullptr, nullptr), "clBuildProgram");
    g.kernel = clCreateKernel(g.program, "soak", &rc);
    check(rc, "clCreateKernel");
  } catch (const std::exception& e) {
    c.tally.failed(kOpenCl, std::string("OpenCL set-up: ") + e.what());
    opencl_finish();
    return {};
  }
  return {{"opencl", 8, round}};
}

void opencl_finish() {
  if (g.kernel) clReleaseKernel(g.kernel);
  if (g.program) clReleaseProgram(g.program);
  if (g.queue) clReleaseCommandQueue(g.queue);
  if (g.context) clReleaseContext(g.context);
  g = State{};
}

}  // namespace outboard::soak
