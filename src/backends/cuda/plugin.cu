// liboutboard-cuda.so: the function table of plugin_api.h over the CUDA runtime and cuBLAS.
// No C++ exception leaves this file: every entry point returns a code and keeps the details for
// last_error().
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <chrono>
#include <type_traits>
#include <cuda_runtime.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/plugin_api.h"
#include "backends/cuda/plugin_internal.hpp"

namespace outboard_cuda {

thread_local std::string t_last_error;
thread_local std::string t_error_text;

namespace {
int runtime_code(cudaError_t e) { return OUTBOARD_CUDA_ERR_RUNTIME - static_cast<int>(e); }
int cublas_code(cublasStatus_t s) { return OUTBOARD_CUDA_ERR_CUBLAS - static_cast<int>(s); }
int cusolver_code(cusolverStatus_t s) { return OUTBOARD_CUDA_ERR_CUSOLVER - static_cast<int>(s); }
}  // namespace

std::string describe_code(int code) {
  if (code == OUTBOARD_CUDA_OK) return "success";
  if (code == OUTBOARD_CUDA_ERR_INVALID_ARGUMENT) return "invalid argument";
  if (code == OUTBOARD_CUDA_ERR_HOST_MEMORY) return "out of host memory in the CUDA plugin";
  if (code == OUTBOARD_CUDA_ERR_INTERNAL) return "internal error in the CUDA plugin";
  if (code <= OUTBOARD_CUDA_ERR_RUNTIME && code > OUTBOARD_CUDA_ERR_CUBLAS) {
    auto e = static_cast<cudaError_t>(OUTBOARD_CUDA_ERR_RUNTIME - code);
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  }
  if (code <= OUTBOARD_CUDA_ERR_CUBLAS && code > OUTBOARD_CUDA_ERR_CUBLAS - 100000) {
    auto s = static_cast<cublasStatus_t>(OUTBOARD_CUDA_ERR_CUBLAS - code);
    return std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
  }
  if (code <= OUTBOARD_CUDA_ERR_CUSOLVER && code > OUTBOARD_CUDA_ERR_CUSOLVER - 100000)
    return "cusolverStatus_t " + std::to_string(OUTBOARD_CUDA_ERR_CUSOLVER - code);
  if (code <= OUTBOARD_CUDA_ERR_CUFFT && code > OUTBOARD_CUDA_ERR_CUFFT - 100000)
    return describe_cufft(OUTBOARD_CUDA_ERR_CUFFT - code);
  return "unknown error code " + std::to_string(code);
}

int fail(int code, const char* what) noexcept {
  try {
    t_last_error = std::string(what) + ": " + describe_code(code);
  } catch (...) {
    t_last_error.clear();
  }
  return code;
}

int check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return OUTBOARD_CUDA_OK;
  cudaGetLastError();  // clears the runtime's (non-sticky) error state for the next call
  return fail(runtime_code(e), what);
}

int check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return OUTBOARD_CUDA_OK;
  return fail(cublas_code(s), what);
}

int check(cusolverStatus_t s, const char* what) {
  if (s == CUSOLVER_STATUS_SUCCESS) return OUTBOARD_CUDA_OK;
  return fail(cusolver_code(s), what);
}

}  // namespace outboard_cuda

using namespace outboard_cuda;

namespace {

bool copy_kind(int kind, cudaMemcpyKind* out, const char** name) {
  switch (kind) {
    case OUTBOARD_CUDA_H2D: *out = cudaMemcpyHostToDevice; *name = "h2d"; return true;
    case OUTBOARD_CUDA_D2H: *out = cudaMemcpyDeviceToHost; *name = "d2h"; return true;
    case OUTBOARD_CUDA_D2D: *out = cudaMemcpyDeviceToDevice; *name = "d2d"; return true;
    default: return false;
  }
}

std::string copy_what(const char* fn, const char* kind, uint64_t bytes) {
  return std::string(fn) + "(" + kind + ", " + std::to_string(bytes) + " bytes)";
}

// ---- PCIe link from sysfs -------------------------------------------------------------------

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32.0 GT/s PCIe" (or "32 GT/s", older kernels) -> 5; 0 for "Unknown" or anything else.
int generation_of(const std::string& speed) {
  char* end = nullptr;
  double gts = std::strtod(speed.c_str(), &end);
  if (end == speed.c_str()) return 0;
  const double per_gen[] = {2.5, 5, 8, 16, 32, 64};
  for (int g = 0; g < 6; ++g)
    if (std::fabs(gts - per_gen[g]) < 0.01) return g + 1;
  return 0;
}

int width_of(const std::string& text) {
  char* end = nullptr;
  long w = std::strtol(text.c_str(), &end, 10);
  return (end == text.c_str() || w <= 0 || w > 64) ? 0 : static_cast<int>(w);
}

void read_pcie_link(const std::string& bdf, outboard_cuda_device_info* info) {
  const std::string dir = "/sys/bus/pci/devices/" + bdf;
  info->pcie_gen_current = generation_of(read_line(dir + "/current_link_speed"));
  info->pcie_width_current = width_of(read_line(dir + "/current_link_width"));
  info->pcie_gen_max = generation_of(read_line(dir + "/max_link_speed"));
  info->pcie_width_max = width_of(read_line(dir + "/max_link_width"));
  // The link can go no faster than the port above the device (a root port or a switch port).
  char real[PATH_MAX];
  if (!realpath(dir.c_str(), real)) return;
  std::string up(real);
  up = up.substr(0, up.rfind('/'));
  int up_gen = generation_of(read_line(up + "/max_link_speed"));
  int up_width = width_of(read_line(up + "/max_link_width"));
  if (up_gen && info->pcie_gen_max && up_gen < info->pcie_gen_max) info->pcie_gen_max = up_gen;
  if (up_width && info->pcie_width_max && up_width < info->pcie_width_max) info->pcie_width_max = up_width;
}

// ---- What the plugin keeps per GPU ----------------------------------------------------------
// Each GPU has its own handles and Level-3 scratch, each set behind its own lock: calls on
// different GPUs never wait for each other, and nothing made on one GPU is used on another (a
// scratch buffer of GPU 0 read by a cuBLAS kernel on GPU 1 is an illegal address, which poisons
// GPU 1's context: issue 32).

constexpr int kMaxDevices = 64;

// Device copies of a whole Level-3 call's operands, kept and grown between calls (cudaMalloc costs
// far more than a call's launch).
struct DeviceScratch {
  void* ptr[4] = {nullptr, nullptr, nullptr, nullptr};  // A, B, output, trmm's separate result
  size_t bytes[4] = {0, 0, 0, 0};
  int reserve(int slot, size_t need) {
    if (bytes[slot] >= need) return OUTBOARD_CUDA_OK;
    if (ptr[slot]) cudaFree(ptr[slot]);
    ptr[slot] = nullptr;
    bytes[slot] = 0;
    if (int rc = check(cudaMalloc(&ptr[slot], need ? need : 1), "cudaMalloc (Level-3 operand)")) return rc;
    bytes[slot] = need;
    return OUTBOARD_CUDA_OK;
  }
  void release() {
    for (int i = 0; i < 4; ++i) {
      if (ptr[i]) cudaFree(ptr[i]);
      ptr[i] = nullptr;
      bytes[i] = 0;
    }
  }
};

struct PerDevice {
  std::mutex level3_mutex;  // whole Level-3 calls (level3, gemm): one at a time per GPU
  cublasHandle_t level3 = nullptr;
  DeviceScratch scratch;
  std::mutex async_mutex;  // level3_async's handle, whose stream each call sets
  cublasHandle_t async = nullptr;
  std::mutex solver_mutex;  // LAPACK calls: one at a time per GPU
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t solver_blas = nullptr;  // gels' triangular solve
};
PerDevice g_devices[kMaxDevices];

// The calling thread's current GPU and its state.
int current_device(PerDevice** out) {
  int device = 0;
  if (int rc = check(cudaGetDevice(&device), "cudaGetDevice")) return rc;
  if (device < 0 || device >= kMaxDevices) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "more GPUs than the plugin serves");
  *out = &g_devices[device];
  return OUTBOARD_CUDA_OK;
}

// A cuBLAS handle in `slot`, made on the current GPU the first time (the caller holds its lock).
int blas_handle(cublasHandle_t& slot) {
  if (slot) return OUTBOARD_CUDA_OK;
  cublasHandle_t h = nullptr;
  if (int rc = check(cublasCreate(&h), "cublasCreate")) return rc;
  if (int rc = check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode")) {
    cublasDestroy(h);
    return rc;
  }
  slot = h;
  return OUTBOARD_CUDA_OK;
}

// Destroys what the plugin made on one GPU, under its locks; the first failure is returned (after
// a fault, callers ignore it: the context is going anyway).
int release_device(PerDevice& d) {
  int rc = OUTBOARD_CUDA_OK;
  auto keep_first = [&](int r) {
    if (!rc) rc = r;
  };
  std::scoped_lock lock(d.level3_mutex, d.async_mutex, d.solver_mutex);
  for (cublasHandle_t* h : {&d.level3, &d.async, &d.solver_blas})
    if (*h) {
      keep_first(check(cublasDestroy(*h), "cublasDestroy"));
      *h = nullptr;
    }
  if (d.solver) {
    keep_first(check(cusolverDnDestroy(d.solver), "cusolverDnDestroy"));
    d.solver = nullptr;
  }
  d.scratch.release();
  return rc;
}

// ---- Page-locked host memory -------------------------------------------------------------------
// Our own mappings, registered with CUDA (portable: every GPU's context sees them page-locked).
// Not cudaHostAlloc: that memory belongs to the context current when it was made, and resetting
// that GPU after a fault (device_reset) would unmap staging that every other GPU is using.
std::mutex g_pinned_mutex;
std::map<void*, size_t> g_pinned;  // mapping -> bytes

// One GEMM call of the given precision.
int gemm_once(cublasHandle_t h, char precision, int n, const void* a, const void* b, void* c) {
  switch (precision) {
    case 's': {
      const float one = 1, zero = 0;
      return check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<const float*>(a), n,
                               static_cast<const float*>(b), n, &zero, static_cast<float*>(c), n),
                   "cublasSgemm");
    }
    case 'd': {
      const double one = 1, zero = 0;
      return check(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<const double*>(a), n,
                               static_cast<const double*>(b), n, &zero, static_cast<double*>(c), n),
                   "cublasDgemm");
    }
    case 'c': {
      const cuComplex one = make_cuComplex(1, 0), zero = make_cuComplex(0, 0);
      return check(cublasCgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<const cuComplex*>(a), n,
                               static_cast<const cuComplex*>(b), n, &zero, static_cast<cuComplex*>(c), n),
                   "cublasCgemm");
    }
    case 'z': {
      const cuDoubleComplex one = make_cuDoubleComplex(1, 0), zero = make_cuDoubleComplex(0, 0);
      return check(cublasZgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<const cuDoubleComplex*>(a), n,
                               static_cast<const cuDoubleComplex*>(b), n, &zero, static_cast<cuDoubleComplex*>(c), n),
                   "cublasZgemm");
    }
    default:
      return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "gemm: precision must be s, d, c or z");
  }
}

// Events created for one timed region, destroyed on every path out.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  int create() {
    if (int rc = check(cudaEventCreate(&start), "cudaEventCreate")) return rc;
    return check(cudaEventCreate(&stop), "cudaEventCreate");
  }
};

}  // namespace

extern "C" {

static const char* ob_error_text(int code) {
  try {
    t_error_text = describe_code(code);
  } catch (...) {
    return "out of host memory";
  }
  return t_error_text.c_str();
}

static const char* ob_last_error(void) { return t_last_error.c_str(); }

static int ob_device_count(int* count) {
  if (!count) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "device_count: null count");
  return guarded([&] {
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e == cudaSuccess) return OUTBOARD_CUDA_OK;
    int rc = check(e, "cudaGetDeviceCount");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    char hint[160];
    if (driver == 0)
      std::snprintf(hint, sizeof hint, " (no NVIDIA driver: libcuda.so.1 is missing or cannot be loaded)");
    else
      std::snprintf(hint, sizeof hint, " (the driver supports CUDA %d.%d, this runtime is CUDA %d.%d)", driver / 1000,
                    driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    t_last_error += hint;
    return rc;
  });
}

static int ob_device_memory(int device, uint64_t* free_bytes, uint64_t* total_bytes) {
  if (!free_bytes || !total_bytes) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "device_memory: null output");
  return guarded([&] {
    int current = 0;
    if (int rc = check(cudaGetDevice(&current), "cudaGetDevice")) return rc;
    if (int rc = check(cudaSetDevice(device), "cudaSetDevice")) return rc;
    size_t f = 0, t = 0;
    int rc = check(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
    cudaSetDevice(current);
    *free_bytes = f;
    *total_bytes = t;
    return rc;
  });
}

static int ob_device_describe(int device, outboard_cuda_device_info* info) {
  if (!info) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "device_describe: null info");
  return guarded([&] {
    std::memset(info, 0, sizeof *info);
    cudaDeviceProp p;
    if (int rc = check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties")) return rc;
    std::snprintf(info->name, sizeof info->name, "%s", p.name);
    info->total_memory = p.totalGlobalMem;
    info->compute_major = p.major;
    info->compute_minor = p.minor;
    info->multiprocessors = p.multiProcessorCount;
    info->async_engines = p.asyncEngineCount;
    // Attributes some devices do not report are left 0.
    auto attribute = [&](cudaDeviceAttr a) {
      int v = 0;
      if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
        cudaGetLastError();
        v = 0;
      }
      return v;
    };
    info->memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
    info->memory_clock_khz = attribute(cudaDevAttrMemoryClockRate);
    std::snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%04x:%02x:%02x.0",
                  static_cast<unsigned>(attribute(cudaDevAttrPciDomainId)) & 0xffffu,
                  static_cast<unsigned>(attribute(cudaDevAttrPciBusId)) & 0xffu,
                  static_cast<unsigned>(attribute(cudaDevAttrPciDeviceId)) & 0x1fu);
    read_pcie_link(info->pci_bus_id, info);
    cudaDriverGetVersion(&info->driver_version);
    cudaRuntimeGetVersion(&info->runtime_version);
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
      info->cublas_version = major * 10000 + minor * 100 + patch;
    return OUTBOARD_CUDA_OK;
  });
}

static int ob_set_device(int device) {
  return guarded([&] { return check(cudaSetDevice(device), "cudaSetDevice"); });
}

static int ob_device_synchronize(void) {
  return guarded([&] { return check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); });
}

static int ob_device_alloc(void** ptr, uint64_t bytes) {
  if (!ptr) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "device_alloc: null ptr");
  return guarded([&] {
    *ptr = nullptr;
    return check(cudaMalloc(ptr, bytes), ("cudaMalloc(" + std::to_string(bytes) + " bytes)").c_str());
  });
}

static int ob_device_free(void* ptr) {
  return guarded([&] { return check(cudaFree(ptr), "cudaFree"); });
}

static int ob_host_alloc_pinned(void** ptr, uint64_t bytes) {
  if (!ptr) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "host_alloc_pinned: null ptr");
  return guarded([&] {
    *ptr = nullptr;
    const size_t size = bytes ? bytes : 1;
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return fail(OUTBOARD_CUDA_ERR_HOST_MEMORY, ("mmap(" + std::to_string(size) + " bytes)").c_str());
    // Portable: page-locked for every GPU's context, so one staging buffer serves all of them.
    if (int rc = check(cudaHostRegister(p, size, cudaHostRegisterPortable),
                       ("cudaHostRegister(" + std::to_string(size) + " bytes)").c_str())) {
      munmap(p, size);
      return rc;
    }
    std::lock_guard<std::mutex> lock(g_pinned_mutex);
    g_pinned[p] = size;
    *ptr = p;
    return OUTBOARD_CUDA_OK;
  });
}

static int ob_host_free_pinned(void* ptr) {
  if (!ptr) return OUTBOARD_CUDA_OK;
  return guarded([&] {
    size_t size = 0;
    {
      std::lock_guard<std::mutex> lock(g_pinned_mutex);
      auto it = g_pinned.find(ptr);
      if (it == g_pinned.end()) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "host_free_pinned: not page-locked by the plugin");
      size = it->second;
      g_pinned.erase(it);
    }
    // A reset GPU may have taken the registration with it: unregistering can fail, unmapping not.
    const int rc = check(cudaHostUnregister(ptr), "cudaHostUnregister");
    munmap(ptr, size);
    return rc == OUTBOARD_CUDA_OK || rc == OUTBOARD_CUDA_ERR_RUNTIME - int(cudaErrorHostMemoryNotRegistered) ? OUTBOARD_CUDA_OK : rc;
  });
}

static int ob_stream_create(void** stream) {
  if (!stream) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "stream_create: null stream");
  return guarded([&] {
    cudaStream_t s = nullptr;
    int rc = check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    *stream = rc ? nullptr : static_cast<void*>(s);
    return rc;
  });
}

static int ob_stream_destroy(void* stream) {
  return guarded([&] { return check(cudaStreamDestroy(static_cast<cudaStream_t>(stream)), "cudaStreamDestroy"); });
}

static int ob_stream_sync(void* stream) {
  return guarded(
      [&] { return check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize"); });
}

static int ob_memcpy_sync(int kind, void* dst, const void* src, uint64_t bytes, void* stream) {
  cudaMemcpyKind k;
  const char* name;
  if (!copy_kind(kind, &k, &name)) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "memcpy_sync: bad copy kind");
  // The hot path of the streaming benchmark: nothing here allocates unless a call fails.
  if (!stream) {
    cudaError_t e = cudaMemcpy(dst, src, bytes, k);
    if (e == cudaSuccess) return OUTBOARD_CUDA_OK;
    return guarded([&] { return check(e, copy_what("cudaMemcpy", name, bytes).c_str()); });
  }
  auto s = static_cast<cudaStream_t>(stream);
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, k, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e == cudaSuccess) return OUTBOARD_CUDA_OK;
  return guarded([&] { return check(e, copy_what("cudaMemcpyAsync+cudaStreamSynchronize", name, bytes).c_str()); });
}

static int ob_memcpy_async(int kind, void* dst, const void* src, uint64_t bytes, void* stream) {
  cudaMemcpyKind k;
  const char* name;
  if (!copy_kind(kind, &k, &name)) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "memcpy_async: bad copy kind");
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, k, static_cast<cudaStream_t>(stream));
  if (e == cudaSuccess) return OUTBOARD_CUDA_OK;
  return guarded([&] { return check(e, copy_what("cudaMemcpyAsync", name, bytes).c_str()); });
}

static int ob_fill(void* dst, int byte_value, uint64_t bytes, void* stream) {
  return guarded([&] {
    auto s = static_cast<cudaStream_t>(stream);
    if (int rc = check(cudaMemsetAsync(dst, byte_value, bytes, s), "cudaMemsetAsync")) return rc;
    return check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  });
}

static int ob_timed_copy(int kind, void* dst, const void* src, uint64_t bytes, int repeats, float* ms) {
  cudaMemcpyKind k;
  const char* name;
  if (!copy_kind(kind, &k, &name)) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "timed_copy: bad copy kind");
  if (repeats < 1 || !ms) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "timed_copy: need repeats >= 1 and ms");
  return guarded([&] {
    *ms = 0;
    cudaStream_t s = nullptr;
    if (int rc = check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags")) return rc;
    int rc = OUTBOARD_CUDA_OK;
    {
      EventPair ev;
      rc = ev.create();
      if (!rc) rc = check(cudaEventRecord(ev.start, s), "cudaEventRecord");
      for (int r = 0; r < repeats && !rc; ++r)
        rc = check(cudaMemcpyAsync(dst, src, bytes, k, s), copy_what("cudaMemcpyAsync", name, bytes).c_str());
      if (!rc) rc = check(cudaEventRecord(ev.stop, s), "cudaEventRecord");
      if (!rc) rc = check(cudaEventSynchronize(ev.stop), "cudaEventSynchronize");
      if (!rc) rc = check(cudaEventElapsedTime(ms, ev.start, ev.stop), "cudaEventElapsedTime");
      if (rc) cudaStreamSynchronize(s);  // nothing may still use the buffers when we return
    }
    int destroyed = check(cudaStreamDestroy(s), "cudaStreamDestroy");
    return rc ? rc : destroyed;
  });
}

static int ob_gemm(char precision, int n, const void* a, const void* b, void* c, int repeats, double* seconds) {
  if (n < 1 || repeats < 1 || !a || !b || !c || !seconds)
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "gemm: need n >= 1, repeats >= 1 and non-null pointers");
  return guarded([&] {
    *seconds = 0;
    PerDevice* d = nullptr;
    if (int rc = current_device(&d)) return rc;
    std::lock_guard<std::mutex> lock(d->level3_mutex);
    if (int rc = blas_handle(d->level3)) return rc;
    cublasHandle_t h = d->level3;
    if (int rc = check(cublasSetStream(h, nullptr), "cublasSetStream")) return rc;
    EventPair ev;
    int rc = ev.create();
    if (!rc) rc = check(cudaEventRecord(ev.start, nullptr), "cudaEventRecord");
    for (int r = 0; r < repeats && !rc; ++r) rc = gemm_once(h, precision, n, a, b, c);
    if (!rc) rc = check(cudaEventRecord(ev.stop, nullptr), "cudaEventRecord");
    if (!rc) rc = check(cudaEventSynchronize(ev.stop), "cudaEventSynchronize");
    float ms = 0;
    if (!rc) rc = check(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
    if (rc) {
      cudaStreamSynchronize(cudaStreamLegacy);
      cudaGetLastError();
      return rc;
    }
    *seconds = ms / 1e3;
    return OUTBOARD_CUDA_OK;
  });
}

// ---- Level-3 BLAS ---------------------------------------------------------------------------

extern "C++" {  // templates inside the exported block

cublasOperation_t op_of(char t) { return t == 'N' ? CUBLAS_OP_N : t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C; }
cublasFillMode_t fill_of(char u) { return u == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER; }
cublasSideMode_t side_of(char s) { return s == 'L' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }
cublasDiagType_t diag_of(char d) { return d == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }

// The cuBLAS call for one precision. T: element type; R: its real type.
template <class T, class R>
int run_level3(cublasHandle_t h, const outboard_cuda_level3& c, const T* a, const T* b, T* out, T* out2) {
  const int m = static_cast<int>(c.m), n = static_cast<int>(c.n), k = static_cast<int>(c.k);
  auto ld = [](int64_t rows) { return static_cast<int>(rows > 1 ? rows : 1); };
  const int lda = ld(c.rows[0]), ldb = ld(c.rows[1]), ldo = ld(c.rows[2]);
  T alpha, beta;
  R alpha_r = static_cast<R>(c.alpha[0]), beta_r = static_cast<R>(c.beta[0]);
  if constexpr (std::is_same_v<T, R>) {
    alpha = alpha_r;
    beta = beta_r;
  } else {
    alpha = {static_cast<R>(c.alpha[0]), static_cast<R>(c.alpha[1])};
    beta = {static_cast<R>(c.beta[0]), static_cast<R>(c.beta[1])};
  }
  constexpr bool is_s = std::is_same_v<T, float>, is_d = std::is_same_v<T, double>,
                 is_c = std::is_same_v<T, cuComplex>;
  // Picks the cuBLAS function of this precision.
#define OB_PICK(fn) (is_s ? (void*)cublasS##fn : is_d ? (void*)cublasD##fn : is_c ? (void*)cublasC##fn : (void*)cublasZ##fn)
  switch (c.routine) {
    case 0:
      return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                       const T*, const T*, int, const T*, int, const T*, T*, int)>(
                        OB_PICK(gemm))(h, op_of(c.transa), op_of(c.transb), m, n, k, &alpha, a, lda, b, ldb, &beta, out, ldo),
                   "cublas gemm");
    case 1:
      return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, int, int,
                                                       const T*, const T*, int, const T*, int, const T*, T*, int)>(
                        OB_PICK(symm))(h, side_of(c.side), fill_of(c.uplo), m, n, &alpha, a, lda, b, ldb, &beta, out, ldo),
                   "cublas symm");
    case 3:
      return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int,
                                                       const T*, const T*, int, const T*, T*, int)>(
                        OB_PICK(syrk))(h, fill_of(c.uplo), op_of(c.transa), n, k, &alpha, a, lda, &beta, out, ldo),
                   "cublas syrk");
    case 5:
      return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int,
                                                       const T*, const T*, int, const T*, int, const T*, T*, int)>(
                        OB_PICK(syr2k))(h, fill_of(c.uplo), op_of(c.transa), n, k, &alpha, a, lda, b, ldb, &beta, out, ldo),
                   "cublas syr2k");
    case 7:  // cuBLAS's trmm writes a separate result: out2, copied back in place of B
      return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                                       cublasOperation_t, cublasDiagType_t, int, int, const T*, const T*,
                                                       int, const T*, int, T*, int)>(OB_PICK(trmm))(
                       h, side_of(c.side), fill_of(c.uplo), op_of(c.transa), diag_of(c.diag), m, n, &alpha, a, lda,
                       out, ldo, out2, ldo),
                   "cublas trmm");
    case 8:
      return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                                       cublasOperation_t, cublasDiagType_t, int, int, const T*, const T*,
                                                       int, T*, int)>(OB_PICK(trsm))(
                       h, side_of(c.side), fill_of(c.uplo), op_of(c.transa), diag_of(c.diag), m, n, &alpha, a, lda,
                       out, ldo),
                   "cublas trsm");
    default:
      break;
  }
#undef OB_PICK
  if constexpr (!std::is_same_v<T, R>) {  // the Hermitian routines exist for complex types only
    constexpr bool single = std::is_same_v<T, cuComplex>;
    switch (c.routine) {
      case 2:
        return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, int, int,
                                                         const T*, const T*, int, const T*, int, const T*, T*, int)>(
                          single ? (void*)cublasChemm : (void*)cublasZhemm)(h, side_of(c.side), fill_of(c.uplo), m, n,
                                                                            &alpha, a, lda, b, ldb, &beta, out, ldo),
                     "cublas hemm");
      case 4:
        return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int,
                                                         const R*, const T*, int, const R*, T*, int)>(
                          single ? (void*)cublasCherk : (void*)cublasZherk)(h, fill_of(c.uplo), op_of(c.transa), n, k,
                                                                            &alpha_r, a, lda, &beta_r, out, ldo),
                     "cublas herk");
      case 6:
        return check(reinterpret_cast<cublasStatus_t (*)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int,
                                                         const T*, const T*, int, const T*, int, const R*, T*, int)>(
                          single ? (void*)cublasCher2k : (void*)cublasZher2k)(h, fill_of(c.uplo), op_of(c.transa), n,
                                                                              k, &alpha, a, lda, b, ldb, &beta_r, out, ldo),
                     "cublas her2k");
      default:
        break;
    }
  }
  return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "level3: routine not defined for this precision");
}

}  // extern "C++"

static int ob_level3(const outboard_cuda_level3* call, const void* a, const void* b, void* output,
                     uint64_t timing_ns[3]) {
  if (!call || !a || !output || call->routine < 0 || call->routine > 8)
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "level3: bad call");
  return guarded([&] {
    const outboard_cuda_level3& c = *call;
    const size_t elem = c.precision == 's' ? 4 : c.precision == 'z' ? 16 : 8;
    size_t bytes[3];
    for (int i = 0; i < 3; ++i) bytes[i] = static_cast<size_t>(c.rows[i]) * static_cast<size_t>(c.cols[i]) * elem;
    PerDevice* d = nullptr;
    if (int rc = current_device(&d)) return rc;
    std::lock_guard<std::mutex> lock(d->level3_mutex);
    if (int rc = blas_handle(d->level3)) return rc;
    cublasHandle_t h = d->level3;
    DeviceScratch& scratch = d->scratch;
    if (int rc = check(cublasSetStream(h, nullptr), "cublasSetStream")) return rc;
    for (int i = 0; i < 3; ++i)
      if (int rc = scratch.reserve(i, bytes[i])) return rc;
    if (c.routine == 7)
      if (int rc = scratch.reserve(3, bytes[2])) return rc;
    auto clock = [] { return std::chrono::steady_clock::now(); };
    auto ns = [](auto d) { return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()); };
    auto t0 = clock();
    // All on the legacy stream, and only it is waited for: not the other calls' pipelines on
    // their own streams of this GPU (a device-wide wait made a whole call wait for them).
    int rc = check(cudaMemcpy(scratch.ptr[0], a, bytes[0], cudaMemcpyHostToDevice), "cudaMemcpy A");
    if (!rc && b && bytes[1]) rc = check(cudaMemcpy(scratch.ptr[1], b, bytes[1], cudaMemcpyHostToDevice), "cudaMemcpy B");
    if (!rc) rc = check(cudaMemcpy(scratch.ptr[2], output, bytes[2], cudaMemcpyHostToDevice), "cudaMemcpy C");
    if (!rc) rc = check(cudaStreamSynchronize(cudaStreamLegacy), "copies to the GPU");
    auto t1 = clock();
    if (!rc) {
      void* out2 = scratch.ptr[3];
      switch (c.precision) {
        case 's': rc = run_level3<float, float>(h, c, (const float*)scratch.ptr[0], (const float*)scratch.ptr[1], (float*)scratch.ptr[2], (float*)out2); break;
        case 'd': rc = run_level3<double, double>(h, c, (const double*)scratch.ptr[0], (const double*)scratch.ptr[1], (double*)scratch.ptr[2], (double*)out2); break;
        case 'c': rc = run_level3<cuComplex, float>(h, c, (const cuComplex*)scratch.ptr[0], (const cuComplex*)scratch.ptr[1], (cuComplex*)scratch.ptr[2], (cuComplex*)out2); break;
        case 'z': rc = run_level3<cuDoubleComplex, double>(h, c, (const cuDoubleComplex*)scratch.ptr[0], (const cuDoubleComplex*)scratch.ptr[1], (cuDoubleComplex*)scratch.ptr[2], (cuDoubleComplex*)out2); break;
        default: rc = fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "level3: precision must be s, d, c or z");
      }
    }
    if (!rc) rc = check(cudaStreamSynchronize(cudaStreamLegacy), "Level-3 call");
    auto t2 = clock();
    void* result = c.routine == 7 ? scratch.ptr[3] : scratch.ptr[2];
    if (!rc) rc = check(cudaMemcpy(output, result, bytes[2], cudaMemcpyDeviceToHost), "cudaMemcpy result");
    auto t3 = clock();
    if (rc) {
      cudaStreamSynchronize(cudaStreamLegacy);
      cudaGetLastError();
      return rc;
    }
    if (timing_ns) {
      timing_ns[0] = ns(t1 - t0);
      timing_ns[1] = ns(t2 - t1);
      timing_ns[2] = ns(t3 - t2);
    }
    return OUTBOARD_CUDA_OK;
  });
}

static int ob_event_create(void** event) {
  if (!event) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "event_create: null event");
  return guarded([&] {
    cudaEvent_t e = nullptr;
    int rc = check(cudaEventCreate(&e), "cudaEventCreate");
    *event = rc ? nullptr : static_cast<void*>(e);
    return rc;
  });
}

static int ob_event_destroy(void* event) {
  return guarded([&] { return check(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy"); });
}

static int ob_event_record(void* event, void* stream) {
  cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream));
  if (e == cudaSuccess) return OUTBOARD_CUDA_OK;
  return guarded([&] { return check(e, "cudaEventRecord"); });
}

static int ob_stream_wait_event(void* stream, void* event) {
  cudaError_t e = cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0);
  if (e == cudaSuccess) return OUTBOARD_CUDA_OK;
  return guarded([&] { return check(e, "cudaStreamWaitEvent"); });
}

static int ob_event_query(void* event, int* done) {
  if (!done) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "event_query: null result");
  cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
  *done = e == cudaSuccess;
  if (e == cudaSuccess || e == cudaErrorNotReady) {
    if (e == cudaErrorNotReady) cudaGetLastError();  // not an error: clear it
    return OUTBOARD_CUDA_OK;
  }
  return guarded([&] { return check(e, "cudaEventQuery"); });
}

static int ob_event_elapsed(void* start, void* end, float* ms) {
  if (!ms) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "event_elapsed: null result");
  return guarded([&] {
    return check(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
                 "cudaEventElapsedTime");
  });
}

static int ob_level3_async(const outboard_cuda_level3* call, const void* a, const void* b, void* output, void* out2,
                           void* stream) {
  if (!call || !a || !output || call->routine < 0 || call->routine > 8 || (call->routine == 7 && !out2))
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "level3_async: bad call");
  return guarded([&] {
    PerDevice* d = nullptr;
    if (int rc = current_device(&d)) return rc;
    // cuBLAS's handle of its own, apart from level3's (which syncs while holding its own).
    std::lock_guard<std::mutex> lock(d->async_mutex);
    if (int rc = blas_handle(d->async)) return rc;
    cublasHandle_t h = d->async;
    if (int rc = check(cublasSetStream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream")) return rc;
    const outboard_cuda_level3& c = *call;
    switch (c.precision) {
      case 's': return run_level3<float, float>(h, c, (const float*)a, (const float*)b, (float*)output, (float*)out2);
      case 'd': return run_level3<double, double>(h, c, (const double*)a, (const double*)b, (double*)output, (double*)out2);
      case 'c': return run_level3<cuComplex, float>(h, c, (const cuComplex*)a, (const cuComplex*)b, (cuComplex*)output, (cuComplex*)out2);
      case 'z': return run_level3<cuDoubleComplex, double>(h, c, (const cuDoubleComplex*)a, (const cuDoubleComplex*)b, (cuDoubleComplex*)output, (cuDoubleComplex*)out2);
      default: return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "level3_async: precision must be s, d, c or z");
    }
  });
}

// ---- LAPACK (cuSOLVER) ----------------------------------------------------------------------

extern "C++" {

// The current GPU's cuSOLVER handle, made the first time (the caller holds its solver_mutex).
int solver_handle(PerDevice& d, cusolverDnHandle_t* out) {
  if (!d.solver) {
    cusolverDnHandle_t h = nullptr;
    if (int rc = check(cusolverDnCreate(&h), "cusolverDnCreate")) return rc;
    d.solver = h;
  }
  *out = d.solver;
  return OUTBOARD_CUDA_OK;
}

// Device memory for one call, freed on every path out.
struct DeviceArrays {
  std::vector<void*> ptrs;
  ~DeviceArrays() {
    for (void* p : ptrs) cudaFree(p);
  }
  int alloc(void** p, size_t bytes, const char* what) {
    *p = nullptr;
    if (int rc = check(cudaMalloc(p, bytes ? bytes : 1), what)) return rc;
    ptrs.push_back(*p);
    return OUTBOARD_CUDA_OK;
  }
};

// The cuSOLVER (and cuBLAS trsm) functions of one precision. T: element type; R: its real type.
template <class T>
struct Solver;
#define OB_SOLVER(T, R, P, ORG, ORM, SYEV, SYEVDX, SYGVD, CT)                                                    \
  template <>                                                                                              \
  struct Solver<T> {                                                                                       \
    using Real = R;                                                                                        \
    static constexpr auto getrf_buffer = cusolverDn##P##getrf_bufferSize;                                  \
    static constexpr auto getrf = cusolverDn##P##getrf;                                                    \
    static constexpr auto getrs = cusolverDn##P##getrs;                                                    \
    static constexpr auto potrf_buffer = cusolverDn##P##potrf_bufferSize;                                  \
    static constexpr auto potrf = cusolverDn##P##potrf;                                                    \
    static constexpr auto potrs = cusolverDn##P##potrs;                                                    \
    static constexpr auto geqrf_buffer = cusolverDn##P##geqrf_bufferSize;                                  \
    static constexpr auto geqrf = cusolverDn##P##geqrf;                                                    \
    static constexpr auto ormqr_buffer = cusolverDn##P##ORM##_bufferSize;                                  \
    static constexpr auto ormqr = cusolverDn##P##ORM;                                                      \
    static constexpr auto orgqr_buffer = cusolverDn##P##ORG##_bufferSize;                                  \
    static constexpr auto orgqr = cusolverDn##P##ORG;                                                      \
    static constexpr auto syevd_buffer = cusolverDn##P##SYEV##_bufferSize;                                 \
    static constexpr auto syevd = cusolverDn##P##SYEV;                                                     \
    static constexpr auto gesvd_buffer = cusolverDn##P##gesvd_bufferSize;                                  \
    static constexpr auto gesvd = cusolverDn##P##gesvd;                                                    \
    static constexpr auto trsm = cublas##P##trsm;                                                          \
    static constexpr auto potri_buffer = cusolverDn##P##potri_bufferSize;                                  \
    static constexpr auto potri = cusolverDn##P##potri;                                                    \
    static constexpr auto sytrf_buffer = cusolverDn##P##sytrf_bufferSize;                                  \
    static constexpr auto sytrf = cusolverDn##P##sytrf;                                                    \
    static constexpr auto syevdx_buffer = cusolverDn##P##SYEVDX##_bufferSize;                              \
    static constexpr auto syevdx = cusolverDn##P##SYEVDX;                                                  \
    static constexpr auto sygvd_buffer = cusolverDn##P##SYGVD##_bufferSize;                                \
    static constexpr auto sygvd = cusolverDn##P##SYGVD;                                                    \
    static constexpr cudaDataType type = CT;                                                               \
  };
OB_SOLVER(float, float, S, orgqr, ormqr, syevd, syevdx, sygvd, CUDA_R_32F)
OB_SOLVER(double, double, D, orgqr, ormqr, syevd, syevdx, sygvd, CUDA_R_64F)
OB_SOLVER(cuComplex, float, C, ungqr, unmqr, heevd, heevdx, hegvd, CUDA_C_32F)
OB_SOLVER(cuDoubleComplex, double, Z, ungqr, unmqr, heevd, heevdx, hegvd, CUDA_C_64F)
#undef OB_SOLVER

template <class T>
bool is_zero(const T& v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return v == 0;
  else return v.x == 0 && v.y == 0;
}

template <class T>
__device__ T conj_of(T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return v;
  else return T{v.x, -v.y};
}

// out (cols x rows, leading dimension ldo) = in^H (in: rows x cols, leading dimension ldi).
template <class T>
__global__ void adjoint_kernel(int64_t rows, int64_t cols, const T* in, int64_t ldi, T* out, int64_t ldo) {
  __shared__ T tile[32][33];
  const int64_t bi = int64_t(blockIdx.x) * 32, bj = int64_t(blockIdx.y) * 32;
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    const int64_t i = bi + threadIdx.x, j = bj + k;
    if (i < rows && j < cols) tile[k][threadIdx.x] = in[j * ldi + i];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    const int64_t j = bj + threadIdx.x, i = bi + k;  // out(j, i) = conj(in(i, j))
    if (i < rows && j < cols) out[i * ldo + j] = conj_of(tile[threadIdx.x][k]);
  }
}

template <class T>
int adjoint(int64_t rows, int64_t cols, const T* in, int64_t ldi, T* out, int64_t ldo) {
  if (rows == 0 || cols == 0) return OUTBOARD_CUDA_OK;
  const dim3 grid(static_cast<unsigned>((rows + 31) / 32), static_cast<unsigned>((cols + 31) / 32));
  adjoint_kernel<T><<<grid, dim3(32, 8)>>>(rows, cols, in, ldi, out, ldo);
  return check(cudaGetLastError(), "adjoint kernel");
}

template <class T>
__global__ void identity_kernel(int64_t n, T* out) {
  const int64_t at = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= n * n) return;
  T v{};
  if (at % n == at / n) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) v = 1;
    else v.x = 1;
  }
  out[at] = v;
}

__global__ void widen_kernel(int64_t n, const int* in, int64_t* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// isuppz(1:2, j) = the first and last row (1-based) where column j of Z (n x cols) is not zero.
template <class T>
__global__ void support_kernel(int64_t n, const T* z, int* isuppz) {
  __shared__ int lo, hi;
  if (threadIdx.x == 0) lo = INT_MAX, hi = -1;
  __syncthreads();
  const int64_t j = blockIdx.x;
  int mylo = INT_MAX, myhi = -1;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const T v = z[j * n + i];
    bool nonzero;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) nonzero = v != 0;
    else nonzero = v.x != 0 || v.y != 0;
    if (nonzero) mylo = min(mylo, int(i)), myhi = max(myhi, int(i));
  }
  atomicMin(&lo, mylo);
  atomicMax(&hi, myhi);
  __syncthreads();
  if (threadIdx.x == 0) {
    isuppz[2 * j] = hi < 0 ? 0 : lo + 1;
    isuppz[2 * j + 1] = hi < 0 ? 0 : hi + 1;
  }
}

unsigned blocks_for(int64_t count, int per_block) { return static_cast<unsigned>((count + per_block - 1) / per_block); }

// LAPACK leaves what a triangular routine does not reference as it was: the other triangle, and
// the diagonal where it is unit. cuSOLVER's need not: its trtri with a unit diagonal overwrote the
// diagonal, where sytri2 keeps D under the unit triangle of sytrf's factor (the reference testers'
// SY and HE inverses). So these routines run on A with a copy kept, and those parts are put back.
template <class T>
__global__ void restore_unreferenced_kernel(int64_t n, bool upper, bool unit, const T* saved, T* a) {
  const int64_t at = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= n * n) return;
  const int64_t i = at % n, j = at / n;
  const bool referenced = (upper ? i <= j : i >= j) && !(unit && i == j);
  if (!referenced) a[at] = saved[at];
}

// A copy of the n x n matrix a (to put back what the routine must not change).
template <class T>
int keep_copy(const T* a, int64_t n, DeviceArrays& mem, T** saved) {
  *saved = nullptr;
  if (n == 0) return OUTBOARD_CUDA_OK;
  if (int rc = mem.alloc(reinterpret_cast<void**>(saved), sizeof(T) * size_t(n) * size_t(n), "cudaMalloc (A's copy)"))
    return rc;
  return check(cudaMemcpyAsync(*saved, a, sizeof(T) * size_t(n) * size_t(n), cudaMemcpyDeviceToDevice, nullptr),
               "cudaMemcpy (A's copy)");
}

template <class T>
int restore_unreferenced(int64_t n, cublasFillMode_t uplo, bool unit, const T* saved, T* a) {
  if (n == 0) return OUTBOARD_CUDA_OK;
  restore_unreferenced_kernel<T><<<blocks_for(n * n, 256), 256>>>(n, uplo == CUBLAS_FILL_MODE_UPPER, unit, saved, a);
  return check(cudaGetLastError(), "restore kernel");
}

// The first n diagonal elements of the device matrix a (leading dimension lda) into diag.
template <class T>
int diagonal_to_host(const T* a, int64_t n, int64_t lda, std::vector<T>& diag) {
  diag.resize(static_cast<size_t>(n));
  if (n == 0) return OUTBOARD_CUDA_OK;
  return check(cudaMemcpy2D(diag.data(), sizeof(T), a, sizeof(T) * static_cast<size_t>(lda + 1), sizeof(T),
                            static_cast<size_t>(n), cudaMemcpyDeviceToHost),
               "cudaMemcpy2D (diagonal)");
}

// The index (1-based) of the first zero on the diagonal of the n x n device matrix a; 0 if none.
template <class T>
int first_zero_on_diagonal(const T* a, int64_t n, int64_t* index) {
  *index = 0;
  std::vector<T> diag;
  if (int rc = diagonal_to_host(a, n, n, diag)) return rc;
  for (int64_t i = 0; i < n; ++i)
    if (is_zero(diag[i])) {
      *index = i + 1;
      break;
    }
  return OUTBOARD_CUDA_OK;
}

// sytrf's INFO as LAPACK gives it, from the factor: the first 1 x 1 block with D(k,k) exactly zero
// in the order LAPACK eliminates (from the last column up for 'U', the first down for 'L'). The
// reference SY testers' singular matrices (a zero row and column) got another INFO from cuSOLVER.
template <class T>
int sytrf_info(const T* a, const int* ipiv, int64_t n, bool upper, int* info_dev) {
  int64_t info = 0;
  if (n > 0) {
    std::vector<T> diag;
    std::vector<int> piv(static_cast<size_t>(n));
    if (int rc = diagonal_to_host(a, n, n, diag)) return rc;
    if (int rc = check(cudaMemcpy(piv.data(), ipiv, sizeof(int) * size_t(n), cudaMemcpyDeviceToHost), "cudaMemcpy (ipiv)"))
      return rc;
    for (int64_t step = 0, k = upper ? n - 1 : 0; k >= 0 && k < n; k += upper ? -step : step) {
      step = piv[size_t(k)] > 0 ? 1 : 2;  // a 2 x 2 block is never singular in LAPACK's sense
      if (step == 1 && is_zero(diag[size_t(k)])) {
        info = k + 1;
        break;
      }
    }
  }
  const int value = static_cast<int>(info);
  return check(cudaMemcpy(info_dev, &value, sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy (sytrf INFO)");
}

// Host workspace of the 64-bit API (cuSOLVER's bufferOnHost), freed on every path out.
struct HostBuffer {
  void* p = nullptr;
  ~HostBuffer() { free(p); }
  int alloc(size_t bytes) {
    p = malloc(bytes ? bytes : 1);
    return p ? OUTBOARD_CUDA_OK : fail(OUTBOARD_CUDA_ERR_HOST_MEMORY, "host workspace");
  }
};

// cusolverDnParams_t for the 64-bit API, destroyed on every path out.
struct Params {
  cusolverDnParams_t p = nullptr;
  ~Params() {
    if (p) cusolverDnDestroyParams(p);
  }
};

// B := A^-1 B from sytrf's factorization and pivots (32-bit, widened for Xsytrs).
template <class T>
int sytrs(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, T* a, int* ipiv, T* b, int* info_dev,
          DeviceArrays& mem) {
  using S = Solver<T>;
  auto ld = [](int64_t rows) { return static_cast<int>(rows > 1 ? rows : 1); };
  int rc = OUTBOARD_CUDA_OK;
  if (n == 0 || nrhs == 0) return OUTBOARD_CUDA_OK;
  int64_t* ipiv64 = nullptr;
  if ((rc = mem.alloc(reinterpret_cast<void**>(&ipiv64), sizeof(int64_t) * n, "cudaMalloc (ipiv64)"))) return rc;
  widen_kernel<<<blocks_for(n, 256), 256>>>(n, ipiv, ipiv64);
  if ((rc = check(cudaGetLastError(), "widen kernel"))) return rc;
  size_t dbytes = 0, hbytes = 0;
  if ((rc = check(cusolverDnXsytrs_bufferSize(h, uplo, n, nrhs, S::type, a, ld(n), ipiv64, S::type, b, ld(n), &dbytes,
                                              &hbytes),
                  "cusolverDnXsytrs_bufferSize")))
    return rc;
  void* dwork = nullptr;
  if ((rc = mem.alloc(&dwork, dbytes, "cudaMalloc (sytrs workspace)"))) return rc;
  HostBuffer hwork;
  if ((rc = hwork.alloc(hbytes))) return rc;
  return check(cusolverDnXsytrs(h, uplo, n, nrhs, S::type, a, ld(n), ipiv64, S::type, b, ld(n), dwork, dbytes, hwork.p,
                                hbytes, info_dev),
               "cusolverDnXsytrs");
}

// Runs the call on device copies; `info_dev` receives cuSOLVER's INFO, *host_info any INFO found
// on the host side (gels' zero diagonal). The caller copies arrays in before and out after.
template <class T>
int run_lapack(cusolverDnHandle_t h, cublasHandle_t& blas, const outboard_cuda_lapack& c, T* a, T* b, int* ipiv, void* vec, T* u, T* vt,
               int* info_dev, int64_t* host_info, DeviceArrays& mem, const outboard_cuda_lapack& d) {
  using S = Solver<T>;
  using R = typename S::Real;
  const int m = static_cast<int>(c.m), n = static_cast<int>(c.n), nrhs = static_cast<int>(c.nrhs);
  auto ld = [](int64_t rows) { return static_cast<int>(rows > 1 ? rows : 1); };
  const cublasFillMode_t uplo = c.uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  int lwork = 0;
  T* work = nullptr;
  auto alloc_work = [&](int elements) {
    return mem.alloc(reinterpret_cast<void**>(&work), static_cast<size_t>(elements > 0 ? elements : 1) * sizeof(T),
                     "cudaMalloc (cuSOLVER workspace)");
  };
  auto factor_info = [&](int* value) {  // reads INFO back after a factorization
    return check(cudaMemcpy(value, info_dev, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy info");
  };
  int rc = OUTBOARD_CUDA_OK;
  switch (c.routine) {
    case 0:    // gesv
    case 1: {  // getrf
      const int rows = c.routine == 0 ? n : m, lda = ld(rows);
      if ((rc = check(S::getrf_buffer(h, rows, n, a, lda, &lwork), "cusolverDn getrf_bufferSize"))) return rc;
      if ((rc = alloc_work(lwork))) return rc;
      if ((rc = check(S::getrf(h, rows, n, a, lda, work, ipiv, info_dev), "cusolverDn getrf"))) return rc;
      if (c.routine == 1 || nrhs == 0) return OUTBOARD_CUDA_OK;
      int f = 0;
      if ((rc = factor_info(&f)) || f != 0) return rc;  // singular: B stays as it was, as LAPACK leaves it
      return check(S::getrs(h, CUBLAS_OP_N, n, nrhs, a, lda, ipiv, b, ld(n), info_dev), "cusolverDn getrs");
    }
    case 2: {  // getrs
      const cublasOperation_t op = c.trans == 'N' ? CUBLAS_OP_N : c.trans == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
      return check(S::getrs(h, op, n, nrhs, a, ld(n), ipiv, b, ld(n), info_dev), "cusolverDn getrs");
    }
    case 3:    // posv
    case 4: {  // potrf
      if ((rc = check(S::potrf_buffer(h, uplo, n, a, ld(n), &lwork), "cusolverDn potrf_bufferSize"))) return rc;
      if ((rc = alloc_work(lwork))) return rc;
      if ((rc = check(S::potrf(h, uplo, n, a, ld(n), work, lwork, info_dev), "cusolverDn potrf"))) return rc;
      if (c.routine == 4 || nrhs == 0) return OUTBOARD_CUDA_OK;
      int f = 0;
      if ((rc = factor_info(&f)) || f != 0) return rc;
      return check(S::potrs(h, uplo, n, nrhs, a, ld(n), b, ld(n), info_dev), "cusolverDn potrs");
    }
    case 5:  // potrs
      return check(S::potrs(h, uplo, n, nrhs, a, ld(n), b, ld(n), info_dev), "cusolverDn potrs");
    case 6: {  // gels, trans 'N', m >= n: A = Q R; B := Q^H B; solve R X = B(1:n, :)
      const int lda = ld(m), ldb = ld(m);
      T* tau = nullptr;
      if ((rc = mem.alloc(reinterpret_cast<void**>(&tau), sizeof(T) * (n ? n : 1), "cudaMalloc (tau)"))) return rc;
      int lq = 0, lo = 0;
      const cublasOperation_t adj = std::is_same_v<T, R> ? CUBLAS_OP_T : CUBLAS_OP_C;
      if ((rc = check(S::geqrf_buffer(h, m, n, a, lda, &lq), "cusolverDn geqrf_bufferSize"))) return rc;
      if ((rc = check(S::ormqr_buffer(h, CUBLAS_SIDE_LEFT, adj, m, nrhs, n, a, lda, tau, b, ldb, &lo),
                      "cusolverDn ormqr_bufferSize")))
        return rc;
      if ((rc = alloc_work(lq > lo ? lq : lo))) return rc;
      lwork = lq > lo ? lq : lo;
      if ((rc = check(S::geqrf(h, m, n, a, lda, tau, work, lwork, info_dev), "cusolverDn geqrf"))) return rc;
      if ((rc = check(S::ormqr(h, CUBLAS_SIDE_LEFT, adj, m, nrhs, n, a, lda, tau, b, ldb, work, lwork, info_dev),
                      "cusolverDn ormqr")))
        return rc;
      // A zero on R's diagonal: rank deficient; LAPACK's INFO is its index and X is not computed.
      std::vector<T> diag;
      if ((rc = diagonal_to_host(a, n, lda, diag))) return rc;
      for (int i = 0; i < n; ++i)
        if (is_zero(diag[i])) {
          *host_info = i + 1;
          return OUTBOARD_CUDA_OK;
        }
      cublasHandle_t bh = nullptr;
      if ((rc = blas_handle(blas))) return rc;
      bh = blas;
      if ((rc = check(cublasSetStream(bh, nullptr), "cublasSetStream"))) return rc;
      T one;
      if constexpr (std::is_same_v<T, R>) one = 1;
      else one = {1, 0};
      return check(S::trsm(bh, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, nrhs,
                           &one, a, lda, b, ldb),
                   "cublas trsm (gels)");
    }
    case 7: {  // geqrf
      if ((rc = check(S::geqrf_buffer(h, m, n, a, ld(m), &lwork), "cusolverDn geqrf_bufferSize"))) return rc;
      if ((rc = alloc_work(lwork))) return rc;
      return check(S::geqrf(h, m, n, a, ld(m), static_cast<T*>(vec), work, lwork, info_dev), "cusolverDn geqrf");
    }
    case 8:     // syevd / heevd
    case 29: {  // syev / heev: the same contract (ascending w, orthonormal vectors, INFO > 0 unconverged)
      const cusolverEigMode_t jobz = c.jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
      R* w = static_cast<R*>(vec);
      if ((rc = check(S::syevd_buffer(h, jobz, uplo, n, a, ld(n), w, &lwork), "cusolverDn syevd_bufferSize"))) return rc;
      if ((rc = alloc_work(lwork))) return rc;
      return check(S::syevd(h, jobz, uplo, n, a, ld(n), w, work, lwork, info_dev), "cusolverDn syevd");
    }
    case 9: {  // gesvd, m >= n
      const int k = m < n ? m : n;
      R* rwork = nullptr;
      if ((rc = mem.alloc(reinterpret_cast<void**>(&rwork), sizeof(R) * (k > 1 ? k : 1), "cudaMalloc (rwork)")))
        return rc;
      if ((rc = check(S::gesvd_buffer(h, m, n, &lwork), "cusolverDn gesvd_bufferSize"))) return rc;
      if ((rc = alloc_work(lwork))) return rc;
      const int ldu = ld(m), ldvt = ld(c.jobvt == 'A' ? n : k);
      return check(S::gesvd(h, static_cast<signed char>(c.jobu), static_cast<signed char>(c.jobvt), m, n, a, ld(m),
                            static_cast<R*>(vec), u, ldu, vt, ldvt, work, lwork, rwork, info_dev),
                   "cusolverDn gesvd");
    }
    case 10: {  // gesdd, on cuSOLVER's gesvd (which needs rows >= columns: m < n runs on A^H)
      const int k = m < n ? m : n;
      if (k == 0) return OUTBOARD_CUDA_OK;
      const char jobz = c.jobz;
      const bool tall = m >= n;
      const int rows = tall ? m : n, cols = tall ? n : m;  // of the matrix cuSOLVER factors
      T* x = a;                                            // that matrix
      if (!tall) {
        if ((rc = mem.alloc(reinterpret_cast<void**>(&x), sizeof(T) * size_t(rows) * cols, "cudaMalloc (A^H)"))) return rc;
        if ((rc = adjoint<T>(m, n, a, ld(m), x, ld(n)))) return rc;
      }
      // cuSOLVER's job, and where its U (rows x rows or rows x cols) and VT (cols x cols) go.
      const char job = jobz == 'A' ? 'A' : jobz == 'N' ? 'N' : 'S';
      T* gu = nullptr;
      T* gvt = nullptr;
      const size_t u_elems = size_t(rows) * (job == 'A' ? rows : cols), vt_elems = size_t(cols) * cols;
      if (job != 'N') {
        // Tall: U straight into u, except jobz 'O' (U's n columns then go over A); VT into vt.
        // Wide: A = (U')^H-side swapped, so both come to scratch and are adjoined into place.
        if (tall && jobz != 'O') {
          gu = u;
        } else if ((rc = mem.alloc(reinterpret_cast<void**>(&gu), sizeof(T) * u_elems, "cudaMalloc (U scratch)"))) {
          return rc;
        }
        if (tall) gvt = vt;
        else if ((rc = mem.alloc(reinterpret_cast<void**>(&gvt), sizeof(T) * vt_elems, "cudaMalloc (VT scratch)")))
          return rc;
      }
      R* rwork = nullptr;
      if ((rc = mem.alloc(reinterpret_cast<void**>(&rwork), sizeof(R) * k, "cudaMalloc (rwork)"))) return rc;
      if ((rc = check(S::gesvd_buffer(h, rows, cols, &lwork), "cusolverDn gesvd_bufferSize"))) return rc;
      if ((rc = alloc_work(lwork))) return rc;
      if ((rc = check(S::gesvd(h, static_cast<signed char>(job), static_cast<signed char>(job), rows, cols, x, ld(rows),
                               static_cast<R*>(vec), gu, ld(rows), gvt, ld(cols), work, lwork, rwork, info_dev),
                      "cusolverDn gesvd (gesdd)")))
        return rc;
      if (job == 'N') return OUTBOARD_CUDA_OK;
      if (tall) {
        if (jobz == 'O')  // A := U (m x n)
          return check(cudaMemcpyAsync(a, gu, sizeof(T) * size_t(m) * n, cudaMemcpyDeviceToDevice, nullptr),
                       "cudaMemcpy (U over A)");
        return OUTBOARD_CUDA_OK;
      }
      // Wide: A^H = U' S V'^H, so A = V' S U'^H: A's U (m x m) = V' = VT'^H, A's VT = U'^H.
      if ((rc = adjoint<T>(cols, cols, gvt, ld(cols), u, ld(m)))) return rc;
      if (jobz == 'A') return adjoint<T>(rows, rows, gu, ld(rows), vt, ld(n));
      if (jobz == 'S') return adjoint<T>(rows, cols, gu, ld(rows), vt, ld(m));
      return adjoint<T>(rows, cols, gu, ld(rows), a, ld(m));  // 'O': VT's m rows over A
    }
    case 12: {  // geev, jobvl 'N' (checked): cusolverDnXgeev
      if (n == 0) return OUTBOARD_CUDA_OK;
      constexpr bool real = std::is_same_v<T, R>;
      Params params;
      if ((rc = check(cusolverDnCreateParams(&params.p), "cusolverDnCreateParams"))) return rc;
      // Real: W holds the n real parts, then the n imaginary parts (wr, wi after the call).
      void* w = vec;
      if constexpr (real) {
        if ((rc = mem.alloc(&w, sizeof(R) * 2 * size_t(n), "cudaMalloc (W)"))) return rc;
      }
      const cusolverEigMode_t jobvr = c.jobvr == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
      size_t dbytes = 0, hbytes = 0;
      if ((rc = check(cusolverDnXgeev_bufferSize(h, params.p, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, S::type, a, ld(n),
                                                 S::type, w, S::type, nullptr, 1, S::type, vt, ld(n), S::type, &dbytes,
                                                 &hbytes),
                      "cusolverDnXgeev_bufferSize")))
        return rc;
      void* dwork = nullptr;
      if ((rc = mem.alloc(&dwork, dbytes, "cudaMalloc (geev workspace)"))) return rc;
      HostBuffer hwork;
      if ((rc = hwork.alloc(hbytes))) return rc;
      if ((rc = check(cusolverDnXgeev(h, params.p, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, S::type, a, ld(n), S::type, w,
                                      S::type, nullptr, 1, S::type, vt, ld(n), S::type, dwork, dbytes, hwork.p, hbytes,
                                      info_dev),
                      "cusolverDnXgeev")))
        return rc;
      if constexpr (real) {
        if ((rc = check(cudaMemcpyAsync(vec, w, sizeof(R) * n, cudaMemcpyDeviceToDevice, nullptr), "cudaMemcpy (wr)")))
          return rc;
        return check(cudaMemcpyAsync(d.vec2, static_cast<R*>(w) + n, sizeof(R) * n, cudaMemcpyDeviceToDevice, nullptr),
                     "cudaMemcpy (wi)");
      }
      return OUTBOARD_CUDA_OK;
    }
    case 15:    // syevr / heevr
    case 16: {  // syevx / heevx: both on syevdx / heevdx
      int found = 0;
      R* w = static_cast<R*>(vec);
      if (n > 0) {
        const cusolverEigMode_t jobz = c.jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        const cusolverEigRange_t range = c.range == 'V'   ? CUSOLVER_EIG_RANGE_V
                                         : c.range == 'I' ? CUSOLVER_EIG_RANGE_I
                                                          : CUSOLVER_EIG_RANGE_ALL;
        const R vl = static_cast<R>(c.vl), vu = static_cast<R>(c.vu);
        const int il = static_cast<int>(c.il), iu = static_cast<int>(c.iu);
        if ((rc = check(S::syevdx_buffer(h, jobz, range, uplo, n, a, ld(n), vl, vu, il, iu, &found, w, &lwork),
                        "cusolverDn syevdx_bufferSize")))
          return rc;
        if ((rc = alloc_work(lwork))) return rc;
        if ((rc = check(S::syevdx(h, jobz, range, uplo, n, a, ld(n), vl, vu, il, iu, &found, w, work, lwork, info_dev),
                        "cusolverDn syevdx")))
          return rc;
        int f = 0;
        if ((rc = factor_info(&f))) return rc;
        if (f != 0) found = 0;
        const int64_t z = c.range == 'I' ? c.iu - c.il + 1 : c.n;
        if (found > z) return fail(OUTBOARD_CUDA_ERR_INTERNAL, "syevdx found more eigenvalues than asked for");
        if (c.jobz == 'V' && found > 0) {
          if ((rc = check(cudaMemcpyAsync(u, a, sizeof(T) * size_t(n) * found, cudaMemcpyDeviceToDevice, nullptr),
                          "cudaMemcpy (Z)")))
            return rc;
          if (c.routine == 15 && d.ints) {
            support_kernel<T><<<static_cast<unsigned>(found), 256>>>(n, u, d.ints);
            if ((rc = check(cudaGetLastError(), "support kernel"))) return rc;
          }
        }
        if (c.routine == 16 && c.jobz == 'V' && d.ints &&
            (rc = check(cudaMemsetAsync(d.ints, 0, sizeof(int) * size_t(n), nullptr), "cudaMemset (ifail)")))
          return rc;
      }
      return check(cudaMemcpyAsync(d.count, &found, sizeof(int), cudaMemcpyHostToDevice, nullptr), "cudaMemcpy (m)");
    }
    case 17: {  // sygvd / hegvd
      if (n == 0) return OUTBOARD_CUDA_OK;
      const cusolverEigMode_t jobz = c.jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
      const cusolverEigType_t itype = c.itype == 3 ? CUSOLVER_EIG_TYPE_3 : c.itype == 2 ? CUSOLVER_EIG_TYPE_2 : CUSOLVER_EIG_TYPE_1;
      R* w = static_cast<R*>(vec);
      if ((rc = check(S::sygvd_buffer(h, itype, jobz, uplo, n, a, ld(n), b, ld(n), w, &lwork), "cusolverDn sygvd_bufferSize")))
        return rc;
      if ((rc = alloc_work(lwork))) return rc;
      return check(S::sygvd(h, itype, jobz, uplo, n, a, ld(n), b, ld(n), w, work, lwork, info_dev), "cusolverDn sygvd");
    }
    case 18:    // sysv
    case 19: {  // sytrf
      if (n == 0) return OUTBOARD_CUDA_OK;
      if ((rc = check(S::sytrf_buffer(h, n, a, ld(n), &lwork), "cusolverDn sytrf_bufferSize"))) return rc;
      if ((rc = alloc_work(lwork))) return rc;
      T* kept = nullptr;
      if ((rc = keep_copy(a, n, mem, &kept))) return rc;
      if ((rc = check(S::sytrf(h, uplo, n, a, ld(n), ipiv, work, lwork, info_dev), "cusolverDn sytrf"))) return rc;
      if ((rc = restore_unreferenced(n, uplo, false, kept, a))) return rc;
      if ((rc = sytrf_info(a, ipiv, n, uplo == CUBLAS_FILL_MODE_UPPER, info_dev))) return rc;
      if (c.routine == 19 || nrhs == 0) return OUTBOARD_CUDA_OK;
      int f = 0;
      if ((rc = factor_info(&f)) || f != 0) return rc;  // D singular: B stays as it was, as LAPACK leaves it
      return sytrs<T>(h, uplo, n, nrhs, a, ipiv, b, info_dev, mem);
    }
    case 20:  // sytrs
      return sytrs<T>(h, uplo, n, nrhs, a, ipiv, b, info_dev, mem);
    case 24: {  // getri: A^-1 = U^-1 L^-1 P, as the solution of (P L U) X = I
      int64_t zero = 0;
      if ((rc = first_zero_on_diagonal(a, n, &zero))) return rc;
      if (zero) {  // U singular: INFO, A as it was (LAPACK's trtri checks before it starts)
        *host_info = zero;
        return OUTBOARD_CUDA_OK;
      }
      if (n == 0) return OUTBOARD_CUDA_OK;
      T* x = nullptr;
      if ((rc = mem.alloc(reinterpret_cast<void**>(&x), sizeof(T) * size_t(n) * n, "cudaMalloc (inverse)"))) return rc;
      identity_kernel<T><<<blocks_for(int64_t(n) * n, 256), 256>>>(n, x);
      if ((rc = check(cudaGetLastError(), "identity kernel"))) return rc;
      if ((rc = check(S::getrs(h, CUBLAS_OP_N, n, n, a, ld(n), ipiv, x, ld(n), info_dev), "cusolverDn getrs (getri)")))
        return rc;
      return check(cudaMemcpyAsync(a, x, sizeof(T) * size_t(n) * n, cudaMemcpyDeviceToDevice, nullptr),
                   "cudaMemcpy (inverse)");
    }
    case 25:    // potri
    case 26: {  // trtri
      int64_t zero = 0;
      if ((c.routine == 25 || c.diag == 'N') && (rc = first_zero_on_diagonal(a, n, &zero))) return rc;
      if (zero) {
        *host_info = zero;
        return OUTBOARD_CUDA_OK;
      }
      if (n == 0) return OUTBOARD_CUDA_OK;
      T* kept = nullptr;
      if ((rc = keep_copy(a, n, mem, &kept))) return rc;
      if (c.routine == 25) {
        if ((rc = check(S::potri_buffer(h, uplo, n, a, ld(n), &lwork), "cusolverDn potri_bufferSize"))) return rc;
        if ((rc = alloc_work(lwork))) return rc;
        if ((rc = check(S::potri(h, uplo, n, a, ld(n), work, lwork, info_dev), "cusolverDn potri"))) return rc;
        return restore_unreferenced(n, uplo, false, kept, a);
      }
      const cublasDiagType_t diag = c.diag == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
      size_t dbytes = 0, hbytes = 0;
      if ((rc = check(cusolverDnXtrtri_bufferSize(h, uplo, diag, n, S::type, a, ld(n), &dbytes, &hbytes),
                      "cusolverDnXtrtri_bufferSize")))
        return rc;
      void* dwork = nullptr;
      if ((rc = mem.alloc(&dwork, dbytes, "cudaMalloc (trtri workspace)"))) return rc;
      HostBuffer hwork;
      if ((rc = hwork.alloc(hbytes))) return rc;
      if ((rc = check(cusolverDnXtrtri(h, uplo, diag, n, S::type, a, ld(n), dwork, dbytes, hwork.p, hbytes, info_dev),
                      "cusolverDnXtrtri")))
        return rc;
      return restore_unreferenced(n, uplo, diag == CUBLAS_DIAG_UNIT, kept, a);
    }
    case 27: {  // orgqr / ungqr: A (m x n) := Q's first n columns; every element is written, as LAPACK's
      const int k = static_cast<int>(c.k);
      const T* tau = static_cast<const T*>(vec);
      if ((rc = check(S::orgqr_buffer(h, m, n, k, a, ld(m), tau, &lwork), "cusolverDn orgqr_bufferSize"))) return rc;
      if ((rc = alloc_work(lwork))) return rc;
      return check(S::orgqr(h, m, n, k, a, ld(m), tau, work, lwork, info_dev), "cusolverDn orgqr");
    }
    case 28: {  // ormqr / unmqr: C (in b, m x n) := op(Q) C or C op(Q); A (the reflectors) is read only
      const int k = static_cast<int>(c.k), lda = ld(c.side == 'L' ? m : n);
      const cublasSideMode_t side = c.side == 'L' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
      const cublasOperation_t op = c.trans == 'N' ? CUBLAS_OP_N : c.trans == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
      const T* tau = static_cast<const T*>(vec);
      if ((rc = check(S::ormqr_buffer(h, side, op, m, n, k, a, lda, tau, b, ld(m), &lwork), "cusolverDn ormqr_bufferSize")))
        return rc;
      if ((rc = alloc_work(lwork))) return rc;
      return check(S::ormqr(h, side, op, m, n, k, a, lda, tau, b, ld(m), work, lwork, info_dev), "cusolverDn ormqr");
    }
    default:
      return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: unknown routine");
  }
}

}  // extern "C++"

extern "C++" {

// Bytes of each array of a call, as plugin_api.h describes them.
struct LapackShapes {
  size_t a = 0, b = 0, ipiv_count = 0, vec = 0, u = 0, vt = 0, vec2 = 0, count = 0, ints = 0;
  bool ipiv_in = false, ipiv_out = false;
  bool vec_in = false;  // tau of orgqr, ormqr: read, not written back
};

bool served_routine(int r) { return (r >= 0 && r <= 10) || r == 12 || (r >= 15 && r <= 20) || (r >= 24 && r <= 29); }

// Checks what both entry points take; fills `shapes`.
int check_lapack_call(const outboard_cuda_lapack* call, int64_t* info, LapackShapes& shapes) {
  if (!call || !info || !served_routine(call->routine) || call->m < 0 || call->n < 0 || call->nrhs < 0 ||
      call->m > INT_MAX || call->n > INT_MAX || call->nrhs > INT_MAX)
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: bad call");
  const outboard_cuda_lapack& c = *call;
  if (c.routine == 6 && (c.trans != 'N' || c.m < c.n))
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: gels needs trans 'N' and m >= n");
  if (c.routine == 9 && (c.m < c.n || c.jobu == 'O' || c.jobvt == 'O'))
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: gesvd needs m >= n and jobu, jobvt other than 'O'");
  if (c.routine == 12 && c.jobvl != 'N')
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: geev computes no left eigenvectors here");
  if ((c.routine == 15 || c.routine == 16) &&
      (c.range == 'I' ? (c.n > 0 && (c.il < 1 || c.iu < c.il || c.iu > c.n)) : c.range == 'V' ? !(c.vl < c.vu) : c.range != 'A'))
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: syevr/syevx range");
  if (c.routine == 17 && (c.itype < 1 || c.itype > 3))
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: sygvd itype must be 1, 2 or 3");
  if (c.routine == 27 && !(c.k >= 1 && c.k <= c.n && c.n <= c.m))
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: orgqr needs m >= n >= k >= 1");
  if (c.routine == 28 &&
      ((c.side != 'L' && c.side != 'R') || (c.trans != 'N' && c.trans != 'T' && c.trans != 'C') || c.k < 1 ||
       c.k > (c.side == 'L' ? c.m : c.n)))
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: ormqr needs side L or R, trans N, T or C, 1 <= k <= m (L) or n (R)");
  const size_t elem = c.precision == 's' ? 4 : c.precision == 'z' ? 16 : 8;
  const size_t real = (c.precision == 's' || c.precision == 'c') ? 4 : 8;
  const bool cplx = c.precision == 'c' || c.precision == 'z';
  const size_t m = static_cast<size_t>(c.m), n = static_cast<size_t>(c.n), nrhs = static_cast<size_t>(c.nrhs);
  const size_t k = m < n ? m : n;
  // A is m x n for getrf, gels, geqrf, gesvd, gesdd and orgqr; (m or n) x k for ormqr; n x n for the others.
  const bool rect = c.routine == 1 || c.routine == 6 || c.routine == 7 || c.routine == 9 || c.routine == 10 ||
                    c.routine == 27;
  LapackShapes& x = shapes;
  x = LapackShapes{};
  x.a = (rect ? m * n : n * n) * elem;
  if (c.routine == 28) x.a = (c.side == 'L' ? m : n) * static_cast<size_t>(c.k) * elem;
  switch (c.routine) {
    case 0: case 3: case 2: case 5: case 18: case 20: x.b = n * nrhs * elem; break;
    case 6: x.b = (m > n ? m : n) * nrhs * elem; break;
    case 17: x.b = n * n * elem; break;
    case 28: x.b = m * n * elem; break;  // C
    default: break;
  }
  if (c.routine == 0 || c.routine == 2 || c.routine == 18 || c.routine == 19 || c.routine == 20 || c.routine == 24)
    x.ipiv_count = n;
  if (c.routine == 1) x.ipiv_count = k;
  x.ipiv_in = c.routine == 2 || c.routine == 20 || c.routine == 24;
  x.ipiv_out = x.ipiv_count && !x.ipiv_in;
  if (c.routine == 7) x.vec = k * elem;
  if (c.routine == 27 || c.routine == 28) x.vec = static_cast<size_t>(c.k) * elem, x.vec_in = true;
  if (c.routine == 8 || c.routine == 15 || c.routine == 16 || c.routine == 17 || c.routine == 29) x.vec = n * real;
  if (c.routine == 9) {
    x.vec = k * real;
    x.u = (c.jobu == 'A' ? m * m : c.jobu == 'S' ? m * k : 0) * elem;
    x.vt = (c.jobvt == 'A' ? n * n : c.jobvt == 'S' ? k * n : 0) * elem;
  }
  if (c.routine == 10) {
    x.vec = k * real;
    x.u = (c.jobz == 'A' || (c.jobz == 'O' && m < n) ? m * m : c.jobz == 'S' ? m * k : 0) * elem;
    x.vt = (c.jobz == 'A' || (c.jobz == 'O' && m >= n) ? n * n : c.jobz == 'S' ? k * n : 0) * elem;
  }
  if (c.routine == 12) {
    x.vec = n * (cplx ? elem : real);
    if (!cplx) x.vec2 = n * real;
    if (c.jobvr == 'V') x.vt = n * n * elem;
  }
  if (c.routine == 15 || c.routine == 16) {
    const size_t z = c.range == 'I' ? static_cast<size_t>(c.iu - c.il + 1) : n;
    x.count = 1;
    if (c.jobz == 'V') {
      x.u = n * z * elem;
      const bool all = c.range == 'A' || (c.range == 'I' && c.il == 1 && static_cast<size_t>(c.iu) == n);
      if (c.routine == 16) x.ints = n;
      else if (all) x.ints = 2 * z;
    }
  }
  // The arrays the routine needs; syevr's isuppz and the rest may be absent (not written then).
  if (!c.a || (x.b && !c.b) || (x.ipiv_count && !c.ipiv) || (x.vec && !c.vec) || (x.u && !c.u) || (x.vt && !c.vt) ||
      (x.vec2 && !c.vec2) || (x.count && !c.count))
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: an array the routine needs is missing");
  if (!c.ints) x.ints = 0;
  if (c.precision != 's' && c.precision != 'd' && c.precision != 'c' && c.precision != 'z')
    return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "lapack: precision must be s, d, c or z");
  return OUTBOARD_CUDA_OK;
}

// The call on device arrays `d` (c's shapes, device pointers), on the legacy stream, waiting for
// it; *info gets LAPACK's INFO.
int lapack_on_device(const outboard_cuda_lapack& c, const outboard_cuda_lapack& d, int64_t* info) {
  PerDevice* pd = nullptr;
  if (int rc = current_device(&pd)) return rc;
  std::lock_guard<std::mutex> lock(pd->solver_mutex);
  cusolverDnHandle_t h = nullptr;
  if (int rc = solver_handle(*pd, &h)) return rc;
  cublasHandle_t& blas = pd->solver_blas;
  if (int rc = check(cusolverDnSetStream(h, nullptr), "cusolverDnSetStream")) return rc;
  DeviceArrays mem;
  int* info_dev = nullptr;
  int rc = mem.alloc(reinterpret_cast<void**>(&info_dev), sizeof(int), "cudaMalloc (info)");
  if (!rc) rc = check(cudaMemset(info_dev, 0, sizeof(int)), "cudaMemset (info)");
  int64_t host_info = 0;
  if (!rc) {
    switch (c.precision) {
      case 's': rc = run_lapack<float>(h, blas, c, (float*)d.a, (float*)d.b, d.ipiv, d.vec, (float*)d.u, (float*)d.vt, info_dev, &host_info, mem, d); break;
      case 'd': rc = run_lapack<double>(h, blas, c, (double*)d.a, (double*)d.b, d.ipiv, d.vec, (double*)d.u, (double*)d.vt, info_dev, &host_info, mem, d); break;
      case 'c': rc = run_lapack<cuComplex>(h, blas, c, (cuComplex*)d.a, (cuComplex*)d.b, d.ipiv, d.vec, (cuComplex*)d.u, (cuComplex*)d.vt, info_dev, &host_info, mem, d); break;
      default: rc = run_lapack<cuDoubleComplex>(h, blas, c, (cuDoubleComplex*)d.a, (cuDoubleComplex*)d.b, d.ipiv, d.vec, (cuDoubleComplex*)d.u, (cuDoubleComplex*)d.vt, info_dev, &host_info, mem, d); break;
    }
  }
  if (!rc) rc = check(cudaStreamSynchronize(nullptr), "LAPACK call");
  int dev_info = 0;
  if (!rc) rc = check(cudaMemcpy(&dev_info, info_dev, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy info");
  if (rc) {
    cudaStreamSynchronize(nullptr);
    cudaGetLastError();
    return rc;
  }
  if (dev_info < 0) return fail(OUTBOARD_CUDA_ERR_INTERNAL, ("cuSOLVER rejected argument " + std::to_string(-dev_info)).c_str());
  *info = host_info ? host_info : dev_info;
  return OUTBOARD_CUDA_OK;
}

uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

}  // extern "C++"

static int ob_lapack(const outboard_cuda_lapack* call, int64_t* info, uint64_t timing_ns[3]) {
  LapackShapes x;
  if (int rc = check_lapack_call(call, info, x)) return rc;
  const outboard_cuda_lapack& c = *call;
  return guarded([&] {
    *info = 0;
    DeviceArrays mem;
    outboard_cuda_lapack d = c;  // the same call on device copies
    d.b = d.vec = d.u = d.vt = d.vec2 = nullptr;
    d.ipiv = d.count = d.ints = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    int rc = mem.alloc(&d.a, x.a, "cudaMalloc (A)");
    if (!rc && x.b) rc = mem.alloc(&d.b, x.b, "cudaMalloc (B)");
    if (!rc && x.ipiv_count) rc = mem.alloc(reinterpret_cast<void**>(&d.ipiv), x.ipiv_count * 4, "cudaMalloc (ipiv)");
    if (!rc && x.vec) rc = mem.alloc(&d.vec, x.vec, "cudaMalloc (tau, w or s)");
    if (!rc && x.u) rc = mem.alloc(&d.u, x.u, "cudaMalloc (U)");
    if (!rc && x.vt) rc = mem.alloc(&d.vt, x.vt, "cudaMalloc (VT)");
    if (!rc && x.vec2) rc = mem.alloc(&d.vec2, x.vec2, "cudaMalloc (wi)");
    if (!rc && x.count) rc = mem.alloc(reinterpret_cast<void**>(&d.count), x.count * 4, "cudaMalloc (m)");
    if (!rc && x.ints) rc = mem.alloc(reinterpret_cast<void**>(&d.ints), x.ints * 4, "cudaMalloc (isuppz or ifail)");
    if (!rc) rc = check(cudaMemcpy(d.a, c.a, x.a, cudaMemcpyHostToDevice), "cudaMemcpy A");
    if (!rc && x.b) rc = check(cudaMemcpy(d.b, c.b, x.b, cudaMemcpyHostToDevice), "cudaMemcpy B");
    if (!rc && x.ipiv_in) rc = check(cudaMemcpy(d.ipiv, c.ipiv, x.ipiv_count * 4, cudaMemcpyHostToDevice), "cudaMemcpy ipiv");
    if (!rc && x.vec_in) rc = check(cudaMemcpy(d.vec, c.vec, x.vec, cudaMemcpyHostToDevice), "cudaMemcpy tau");
    if (!rc) rc = check(cudaStreamSynchronize(cudaStreamLegacy), "copies to the GPU");
    const uint64_t to_device = elapsed_ns(t0);
    const auto t1 = std::chrono::steady_clock::now();
    if (!rc) rc = lapack_on_device(c, d, info);
    const uint64_t compute = elapsed_ns(t1);
    const auto t2 = std::chrono::steady_clock::now();
    if (!rc && c.a_out) rc = check(cudaMemcpy(c.a, d.a, x.a, cudaMemcpyDeviceToHost), "cudaMemcpy A back");
    if (!rc && x.b) rc = check(cudaMemcpy(c.b, d.b, x.b, cudaMemcpyDeviceToHost), "cudaMemcpy B back");
    if (!rc && x.ipiv_out)
      rc = check(cudaMemcpy(c.ipiv, d.ipiv, x.ipiv_count * 4, cudaMemcpyDeviceToHost), "cudaMemcpy ipiv back");
    if (!rc && x.vec && !x.vec_in) rc = check(cudaMemcpy(c.vec, d.vec, x.vec, cudaMemcpyDeviceToHost), "cudaMemcpy tau/w/s back");
    if (!rc && x.u) rc = check(cudaMemcpy(c.u, d.u, x.u, cudaMemcpyDeviceToHost), "cudaMemcpy U back");
    if (!rc && x.vt) rc = check(cudaMemcpy(c.vt, d.vt, x.vt, cudaMemcpyDeviceToHost), "cudaMemcpy VT back");
    if (!rc && x.vec2) rc = check(cudaMemcpy(c.vec2, d.vec2, x.vec2, cudaMemcpyDeviceToHost), "cudaMemcpy wi back");
    if (!rc && x.count) rc = check(cudaMemcpy(c.count, d.count, x.count * 4, cudaMemcpyDeviceToHost), "cudaMemcpy m back");
    if (!rc && x.ints) rc = check(cudaMemcpy(c.ints, d.ints, x.ints * 4, cudaMemcpyDeviceToHost), "cudaMemcpy isuppz/ifail back");
    if (rc) {
      cudaStreamSynchronize(cudaStreamLegacy);
      cudaGetLastError();
      return rc;
    }
    if (timing_ns) {
      timing_ns[0] = to_device;
      timing_ns[1] = compute;
      timing_ns[2] = elapsed_ns(t2);
    }
    return OUTBOARD_CUDA_OK;
  });
}

static int ob_lapack_device(const outboard_cuda_lapack* call, int64_t* info, uint64_t* compute_ns) {
  LapackShapes x;
  if (int rc = check_lapack_call(call, info, x)) return rc;
  return guarded([&] {
    *info = 0;
    const auto t0 = std::chrono::steady_clock::now();
    if (int rc = lapack_on_device(*call, *call, info)) return rc;
    if (compute_ns) *compute_ns = elapsed_ns(t0);
    return OUTBOARD_CUDA_OK;
  });
}

static int ob_release(void) {
  return guarded([&] {
    int rc = OUTBOARD_CUDA_OK;
    for (PerDevice& d : g_devices)
      if (int r = release_device(d); !rc) rc = r;
    return rc;
  });
}

// ---- Faults: a GPU's health, its reset, and the test-only trap --------------------------------

extern "C++" {
// Makes `device` current for a scope and puts the caller's device back after.
struct OnDevice {
  int previous = -1;
  cudaError_t selected;
  explicit OnDevice(int device) {
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    selected = cudaSetDevice(device);
  }
  ~OnDevice() {
    if (previous >= 0) cudaSetDevice(previous);
    cudaGetLastError();
  }
};

bool valid_device(int device) {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && device >= 0 && device < count && device < kMaxDevices;
}

__global__ void trap_kernel() { __trap(); }
}  // extern "C++"

static int ob_get_device(int* device) {
  if (!device) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "get_device: null device");
  return guarded([&] { return check(cudaGetDevice(device), "cudaGetDevice"); });
}

static int ob_device_health(int device) {
  return guarded([&] {
    if (!valid_device(device)) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "device_health: no such GPU");
    OnDevice on(device);
    if (on.selected != cudaSuccess) return check(on.selected, "cudaSetDevice");
    // A sticky error (illegal address, a trap, ECC) fails every later call in the context: a
    // wait for the device's work returns it, where a healthy device only waits.
    return check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  });
}

static int ob_device_reset(int device) {
  return guarded([&] {
    if (!valid_device(device)) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "device_reset: no such GPU");
    OnDevice on(device);
    release_device(g_devices[device]);  // errors expected: the context is going
    cudaGetLastError();
    if (int rc = check(cudaDeviceReset(), "cudaDeviceReset")) return rc;
    // A new context, given a few seconds: the driver may still be tearing the old one down. (On
    // the H100 hosts of issue 32, driver 580, none could be made in the same process for 20 s
    // after a fault: cudaErrorDevicesUnavailable; the server then starts again instead.)
    cudaError_t made = cudaFree(nullptr);
    for (int i = 0; made != cudaSuccess && i < 30; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      made = cudaFree(nullptr);
    }
    if (int rc = check(made, "making the GPU's context again after cudaDeviceReset")) return rc;
    // Registrations made while this GPU's old context was current may have gone with it.
    {
      std::lock_guard<std::mutex> lock(g_pinned_mutex);
      for (const auto& [p, size] : g_pinned) {
        unsigned flags = 0;
        if (cudaHostGetFlags(&flags, p) == cudaSuccess) continue;
        cudaGetLastError();
        const cudaError_t e = cudaHostRegister(p, size, cudaHostRegisterPortable);
        if (e != cudaSuccess && e != cudaErrorHostMemoryAlreadyRegistered) return check(e, "cudaHostRegister (after reset)");
        cudaGetLastError();
      }
    }
    // The new context must run work: a kernel (a fill) and a wait.
    void* p = nullptr;
    if (int rc = check(cudaMalloc(&p, 1 << 20), "cudaMalloc (after reset)")) return rc;
    int rc = check(cudaMemset(p, 0, 1 << 20), "cudaMemset (after reset)");
    if (!rc) rc = check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after reset)");
    cudaFree(p);
    return rc;
  });
}

static int ob_inject_fault(void* stream) {
  return guarded([&] {
    trap_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>();
    return check(cudaGetLastError(), "launching the test fault");
  });
}

// plugin_fft.cu
int ob_fft_plan_create(const outboard_cuda_fft* fft, void** plan, uint64_t* work_bytes);
int ob_fft_plan_destroy(void* plan);
int ob_fft_exec(void* plan, const outboard_cuda_fft* fft, void* in, void* out, void* stream);

static const outboard_cuda_api_v1 g_api = {
    OUTBOARD_CUDA_API_VERSION,
    sizeof(outboard_cuda_api_v1),
    ob_error_text,
    ob_last_error,
    ob_device_count,
    ob_device_describe,
    ob_set_device,
    ob_device_synchronize,
    ob_device_alloc,
    ob_device_free,
    ob_host_alloc_pinned,
    ob_host_free_pinned,
    ob_stream_create,
    ob_stream_destroy,
    ob_stream_sync,
    ob_memcpy_sync,
    ob_memcpy_async,
    ob_fill,
    ob_timed_copy,
    ob_gemm,
    ob_release,
    ob_level3,
    ob_event_create,
    ob_event_destroy,
    ob_event_record,
    ob_stream_wait_event,
    ob_event_query,
    ob_event_elapsed,
    ob_level3_async,
    ob_lapack,
    ob_lapack_device,
    ob_fft_plan_create,
    ob_fft_plan_destroy,
    ob_fft_exec,
    ob_device_memory,
    ob_get_device,
    ob_device_health,
    ob_device_reset,
    ob_inject_fault,
};

const outboard_cuda_api_v1* outboard_cuda_plugin_v1(void) { return &g_api; }

}  // extern "C"
