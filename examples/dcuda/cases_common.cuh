// Shared by the dcuda case studies (stencil, particles, spmv, power): options, CUDA checks,
// deterministic device helpers (block sums and stable partitions whose order of operations does
// not depend on timing, so the dcuda version and its baseline can be compared bitwise), and the
// report (one line per version, the speed-up, the check, optional JSON).
//
// The programs are built with --fmad=false (examples/dcuda/CMakeLists.txt): the same expression
// inlined into two different kernels might otherwise be contracted into FMAs differently, and the
// results would differ in the last bits for no reason that has to do with dcuda.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "dcuda/dcuda.h"

#define CASE_CHECK(call)                                                                                       \
  do {                                                                                                         \
    cudaError_t e_ = (call);                                                                                   \
    if (e_ != cudaSuccess) {                                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));              \
      std::exit(2);                                                                                            \
    }                                                                                                          \
  } while (0)

namespace cases {

// --name=VALUE or --name VALUE; --help lists what the program reads.
class Options {
 public:
  Options(int argc, char** argv) : argc_(argc), argv_(argv) {}
  const char* raw(const char* name) const {
    const size_t n = std::strlen(name);
    for (int i = 1; i < argc_; ++i) {
      const char* a = argv_[i];
      if (a[0] != '-' || a[1] != '-' || std::strncmp(a + 2, name, n) != 0) continue;
      if (a[2 + n] == '=') return a + 3 + n;
      if (a[2 + n] == 0) return i + 1 < argc_ ? argv_[i + 1] : "";
    }
    return nullptr;
  }
  long integer(const char* name, long fallback) {
    usage_ += std::string("  --") + name + " N (" + std::to_string(fallback) + ")\n";
    const char* v = raw(name);
    return v && *v ? std::strtol(v, nullptr, 10) : fallback;
  }
  double real(const char* name, double fallback) {
    usage_ += std::string("  --") + name + " X (" + std::to_string(fallback) + ")\n";
    const char* v = raw(name);
    return v && *v ? std::strtod(v, nullptr) : fallback;
  }
  std::string text(const char* name, const char* fallback) {
    usage_ += std::string("  --") + name + " TEXT (" + (*fallback ? fallback : "none") + ")\n";
    const char* v = raw(name);
    return v ? std::string(v) : std::string(fallback);
  }
  bool flag(const char* name) {
    usage_ += std::string("  --") + name + "\n";
    return raw(name) != nullptr;
  }
  // Call after reading every option: prints the usage and exits on --help.
  void done(const char* what) const {
    for (int i = 1; i < argc_; ++i)
      if (!std::strcmp(argv_[i], "--help") || !std::strcmp(argv_[i], "-h")) {
        std::printf("%s\noptions (default):\n%senv: DCUDA_RANKS_PER_GPU=N (all resident blocks)\n",
                    what, usage_.c_str());
        std::exit(0);
      }
  }

 private:
  int argc_;
  char** argv_;
  std::string usage_;
};

// A dcuda context for `kernel` at `threads` per rank; exits on failure. `ranks`: how many.
inline dcuda_host_context start_dcuda(dcuda_kernel kernel, int threads, int* ranks) {
  dcuda_host_context ctx = nullptr;
  if (threads < 32 || threads % 32 || threads > 1024) {
    std::fprintf(stderr, "threads per rank must be a multiple of 32 in 32..1024\n");
    std::exit(2);
  }
  if (dcuda_host_init(nullptr, nullptr, &ctx, kernel, threads) != DCUDA_SUCCESS) std::exit(2);
  dcuda_host_get_rank_info(ctx, ranks, nullptr, nullptr, nullptr, nullptr);
  return ctx;
}

// dcuda_host_run, exiting with the rank's error on failure.
inline double run_dcuda(dcuda_host_context ctx, const void* args, size_t bytes) {
  const double ms = dcuda_host_run(ctx, args, bytes);
  if (ms < 0) {
    std::fprintf(stderr, "dcuda run failed (%g): %s\n", ms, dcuda_host_error(ctx));
    std::exit(2);
  }
  return ms;
}

// Milliseconds between two events recorded around `work` on `stream` (which it must use).
template <class F>
double time_on(cudaStream_t stream, F&& work) {
  cudaEvent_t a, b;
  CASE_CHECK(cudaEventCreate(&a));
  CASE_CHECK(cudaEventCreate(&b));
  CASE_CHECK(cudaEventRecord(a, stream));
  work();
  CASE_CHECK(cudaEventRecord(b, stream));
  CASE_CHECK(cudaEventSynchronize(b));
  CASE_CHECK(cudaGetLastError());
  float ms = 0;
  CASE_CHECK(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

// Compares two results: bitwise, and the largest relative difference max|a-b| / max|b|.
struct Check {
  bool bitwise = true;
  double rel = 0;
  size_t first_difference = 0;
};
inline Check compare(const std::vector<double>& got, const std::vector<double>& want) {
  Check c;
  double diff = 0, scale = 0;
  if (got.size() != want.size()) return Check{false, INFINITY, 0};
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0 && c.bitwise) c.bitwise = false, c.first_difference = i;
    const double d = std::fabs(got[i] - want[i]);
    if (!(d <= diff)) diff = d;  // NaN propagates as a mismatch
    scale = std::fmax(scale, std::fabs(want[i]));
  }
  c.rel = scale > 0 ? diff / scale : diff;
  if (std::isnan(diff)) c.rel = INFINITY;
  return c;
}

// One line per version, the speed-up and the check; JSON when asked. Returns the exit status:
// 0 when the results agree (bitwise where `exact`, within `tolerance` otherwise), 1 if not.
struct Report {
  std::string program;
  std::vector<std::pair<std::string, double>> sizes;  // ranks, per-rank sizes, iterations...
  std::string baseline_kind;
  double dcuda_ms = 0, baseline_ms = 0;
  bool exact = true;
  double tolerance = 0;
  Check check;
  std::vector<std::pair<std::string, double>> extra;  // figures of the result (e.g. eigenvalue)

  int finish(const std::string& json_path) const {
    std::string sz;
    for (auto& [k, v] : sizes) {
      char b[96];
      std::snprintf(b, sizeof b, " %s %.17g", k.c_str(), v);
      sz += b;
    }
    const bool ok = exact ? check.bitwise : check.rel <= tolerance;
    std::printf("%s dcuda    %12.3f ms %s\n", program.c_str(), dcuda_ms, sz.c_str());
    std::printf("%s baseline %12.3f ms %s (%s)\n", program.c_str(), baseline_ms, sz.c_str(), baseline_kind.c_str());
    for (auto& [k, v] : extra) std::printf("%s %s %.17g\n", program.c_str(), k.c_str(), v);
    std::printf("%s speed-up %.3f (baseline / dcuda); check: %s, max relative difference %.3g%s%s\n", program.c_str(),
                baseline_ms / dcuda_ms, check.bitwise ? "bitwise equal" : "not bitwise equal", check.rel,
                exact ? " (bitwise required)" : (" (tolerance " + std::to_string(tolerance) + ")").c_str(),
                ok ? "" : " -- MISMATCH");
    if (!check.bitwise) std::printf("%s first difference at element %zu\n", program.c_str(), check.first_difference);
    if (!json_path.empty()) {
      FILE* f = std::fopen(json_path.c_str(), "w");
      if (!f) {
        std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
        return 1;
      }
      std::fprintf(f, "{\"program\": \"%s\", \"baseline\": \"%s\"", program.c_str(), baseline_kind.c_str());
      for (auto& [k, v] : sizes) std::fprintf(f, ", \"%s\": %.17g", k.c_str(), v);
      for (auto& [k, v] : extra) std::fprintf(f, ", \"%s\": %.17g", k.c_str(), v);
      std::fprintf(f,
                   ", \"dcuda_ms\": %.6f, \"baseline_ms\": %.6f, \"speedup\": %.6f, \"bitwise_equal\": %s, "
                   "\"max_relative_difference\": %.6g, \"ok\": %s}\n",
                   dcuda_ms, baseline_ms, baseline_ms / dcuda_ms, check.bitwise ? "true" : "false", check.rel,
                   ok ? "true" : "false");
      std::fclose(f);
    }
    return ok ? 0 : 1;
  }
};

// A 64-bit mix (splitmix64's finaliser): deterministic pseudo-random numbers from indices.
__host__ __device__ inline uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
// In [0, 1), 53 bits.
__host__ __device__ inline double unit(uint64_t key) { return static_cast<double>(mix(key) >> 11) * 0x1.0p-53; }

// ---- device helpers: collective over the block's threads (blockDim.x a multiple of 32) ----

// The sum of every thread's `v`, to every thread, in an order fixed by blockDim alone: a
// shuffle tree in each warp, then the warps' sums added one after the other by thread 0.
__device__ inline double block_sum(double v) {
  __shared__ double warp_sums[32];
  __shared__ double total;
  for (int o = 16; o > 0; o >>= 1) v = v + __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = warp_sums[0];
    for (unsigned w = 1; w < blockDim.x / 32; ++w) s = s + warp_sums[w];
    total = s;
  }
  __syncthreads();
  const double r = total;
  __syncthreads();
  return r;
}

// y[i] = sum_k A(i, k) x(cols(i, k)) for rows [r0, r1) of an ELLPACK matrix (every row `width`
// entries, column-major: entry k of row i at k * rows + i, so neighbouring threads read
// neighbouring entries); each row's products added in entry order. Collective over the block.
__device__ inline void ell_rows(const int* cols, const double* vals, const double* x, double* y, int rows, int width, int r0,
                                int r1) {
  for (int i = r0 + static_cast<int>(threadIdx.x); i < r1; i += blockDim.x) {
    double s = 0;
    for (int k = 0; k < width; ++k) s = s + vals[static_cast<long>(k) * rows + i] * x[cols[static_cast<long>(k) * rows + i]];
    y[i] = s;
  }
}

// Stable partition of in[0, n) by `klass(element)` (0, 1 or 2) into out[k] (appended at
// counts[k], which the caller initialises; out[k] == nullptr drops that class; elements past
// caps[k] are counted but not written, so counts[k] > caps[k] tells of an overflow). Every thread
// must call it; counts[] must be in shared memory, initialised before a __syncthreads (it is read
// and written by thread 0 only, and every thread sees the final counts after it returns).
template <class T, class Klass>
__device__ inline void block_partition3(const T* in, int n, T* out0, T* out1, T* out2, const int* caps, int* counts,
                                        Klass klass) {
  __shared__ int warp_base[32][3];
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x / 32;
  T* outs[3] = {out0, out1, out2};
  for (int start = 0; start < n; start += blockDim.x) {
    const int i = start + static_cast<int>(threadIdx.x);
    T e{};
    int k = -1;
    if (i < n) e = in[i], k = klass(e);
    unsigned before[3];
    for (int c = 0; c < 3; ++c) {
      const unsigned m = __ballot_sync(0xffffffffu, k == c);
      before[c] = __popc(m & ((1u << lane) - 1));
      if (lane == 0) warp_base[warp][c] = __popc(m);
    }
    __syncthreads();
    if (threadIdx.x == 0) {  // exclusive scan of the warps' counts, added to the running counts
      for (int c = 0; c < 3; ++c) {
        int run = counts[c];
        for (unsigned w = 0; w < warps; ++w) {
          const int here = warp_base[w][c];
          warp_base[w][c] = run;
          run += here;
        }
        counts[c] = run;
      }
    }
    __syncthreads();
    if (k >= 0 && outs[k]) {
      const int at = warp_base[warp][k] + static_cast<int>(before[k]);
      if (at < caps[k]) outs[k][at] = e;
    }
    __syncthreads();
  }
}

}  // namespace cases
