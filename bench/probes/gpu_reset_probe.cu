// What a GPU fault does to a process, and whether cudaDeviceReset brings the GPU back: a probe
// for issue 32's fault handling (bench/gpu/servers.sh builds and runs it on the GPU machine).
//   gpu_reset_probe FAULT_DEVICE OTHER_DEVICE|-1 trap|illegal reg|noreg
// Makes contexts on both devices (page-locked host memory registered on the other device's when
// `reg`), faults FAULT_DEVICE with a trapping kernel or an illegal address, then reports what
// each CUDA call returns: on the faulted device, on the other, across cudaDeviceReset, and while
// the faulted device's context is made again (retried for 20 s).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

__global__ void trap_kernel() { __trap(); }
__global__ void illegal_kernel(int* p) { *p = 1; }
__global__ void touch(int* p) { p[threadIdx.x] = threadIdx.x; }

static double t0;
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() - t0;
}
static cudaError_t show(const char* what, cudaError_t e) {
  std::printf("%8.3f s  %-50s %s\n", now(), what, e == cudaSuccess ? "ok" : cudaGetErrorName(e));
  return e;
}
// A small kernel and a wait on the current device.
static cudaError_t works(const char* where) {
  int* p = nullptr;
  char what[96];
  std::snprintf(what, sizeof what, "%s: cudaMalloc", where);
  if (show(what, cudaMalloc(&p, 4096)) != cudaSuccess) return cudaErrorUnknown;
  touch<<<1, 32>>>(p);
  std::snprintf(what, sizeof what, "%s: kernel + cudaDeviceSynchronize", where);
  cudaError_t e = show(what, cudaDeviceSynchronize());
  cudaFree(p);
  return e;
}

int main(int argc, char** argv) {
  if (argc != 5) return std::fprintf(stderr, "usage: gpu_reset_probe FAULT_DEVICE OTHER_DEVICE|-1 trap|illegal reg|noreg\n"), 2;
  t0 = now();
  const int bad = std::atoi(argv[1]), other = std::atoi(argv[2]);
  const bool trap = !std::strcmp(argv[3], "trap"), reg = !std::strcmp(argv[4], "reg");
  const size_t bytes = 64 << 20;
  void* host = std::aligned_alloc(4096, bytes);
  std::memset(host, 1, bytes);
  if (other >= 0) {
    show("cudaSetDevice(other)", cudaSetDevice(other));
    works("other before");
  }
  show("cudaSetDevice(faulty)", cudaSetDevice(bad));
  works("faulty before");
  if (reg) {
    if (other >= 0) cudaSetDevice(other);
    show("cudaHostRegister(portable) on the other's context", cudaHostRegister(host, bytes, cudaHostRegisterPortable));
    cudaSetDevice(bad);
  }
  if (trap) trap_kernel<<<1, 1>>>();
  else illegal_kernel<<<1, 1>>>(reinterpret_cast<int*>(16));
  show("faulty: the fault, cudaDeviceSynchronize", cudaDeviceSynchronize());
  show("faulty: cudaGetLastError", cudaGetLastError());
  if (other >= 0) {
    show("cudaSetDevice(other)", cudaSetDevice(other));
    show("other: cudaDeviceSynchronize", cudaDeviceSynchronize());
    works("other after the fault");
  }
  show("cudaSetDevice(faulty)", cudaSetDevice(bad));
  show("faulty: cudaDeviceReset", cudaDeviceReset());
  bool back = false;
  for (int i = 0; i < 400 && !back; ++i) {
    cudaError_t e = cudaFree(nullptr);
    if (e == cudaSuccess) back = true;
    if (i == 0 || back) show("faulty: cudaFree(0) (a new context)", e);
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  unsigned flags = 0;
  if (reg) show("cudaHostGetFlags (still registered?)", cudaHostGetFlags(&flags, host));
  works("faulty after reset");
  if (reg) {
    show("cudaHostRegister again", cudaHostRegister(host, bytes, cudaHostRegisterPortable));
    void* d = nullptr;
    cudaMalloc(&d, bytes);
    show("faulty: H2D from the registered memory", cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    cudaFree(d);
  }
  if (other >= 0) {
    show("cudaSetDevice(other)", cudaSetDevice(other));
    works("other at the end");
  }
  return 0;
}
