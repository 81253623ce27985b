// Shared by the dcuda case studies (stencil, particles, spmv, power): options, CUDA checks,
// deterministic device helpers (block sums and stable partitions whose order of operations does
// not depend on timing, so the dcuda version and its baseline can be compared bitwise), the dcuda
// host calls every program makes (start_dcuda, run_dcuda: the reference dCUDA host interface of
// dcuda/dcuda.h), and the report (one parseable line per result, optional JSON).
//
// The programs are built with --fmad=false (examples/dcuda/CMakeLists.txt): the same expression
// inlined into two different kernels might otherwise be contracted into FMAs differently, and the
// results would differ in the last bits for no reason that has to do with dcuda.
//
// Several processes (`outboard dcuda run -n N -- PROGRAM`): every process allocates and fills the
// whole problem (all world ranks' parts; its ranks use theirs, the others' receive nothing), runs
// the host-driven baseline over the whole problem on its own GPU, and checks its own ranks' part of
// the dcuda result against the same part of the baseline's. Each process prints its own result
// line; the baseline's time is then that of the whole problem on one GPU.
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
#include "dcuda/dcuda_device.cuh"

#define CASE_CHECK(call)                                                                                       \
  do {                                                                                                         \
    cudaError_t e_ = (call);                                                                                   \
    if (e_ != cudaSuccess) {                                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));              \
      std::exit(2);                                                                                            \
    }                                                                                                          \
  } while (0)

namespace cases {

// --name=VALUE or --name VALUE; --help lists what the program reads; an option it does not read
// is an error (a misspelt size must not silently run the default). Every program has --quick
// (read first: it picks the defaults of the sizes), --threads and --json (read by done()).
class Options {
 public:
  Options(int argc, char** argv) : argc_(argc), argv_(argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    quick = flag("quick", "small sizes, for a test");
  }
  bool quick = false;
  int threads = 256;  // per rank
  std::string json;   // where to write the result as JSON ("": nowhere)
  long integer(const char* name, long fallback) {
    add(name, " N (" + std::to_string(fallback) + ")");
    const char* v = raw(name);
    if (!v) return fallback;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (!*v || *end) bad(name, v);
    return n;
  }
  double real(const char* name, double fallback) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", fallback);
    add(name, std::string(" X (") + b + ")");
    const char* v = raw(name);
    if (!v) return fallback;
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (!*v || *end) bad(name, v);
    return x;
  }
  std::string text(const char* name, const char* fallback) {
    add(name, std::string(" TEXT (") + (*fallback ? fallback : "none") + ")");
    const char* v = raw(name);
    return v ? std::string(v) : std::string(fallback);
  }
  bool flag(const char* name, const char* what) {
    add(name, std::string("  ") + what);
    flags_.push_back(name);
    for (int i = 1; i < argc_; ++i)
      if (!std::strncmp(argv_[i], "--", 2) && !std::strcmp(argv_[i] + 2, name)) return true;
    return false;
  }
  // Call after reading every option: reads --threads and --json, prints the usage and exits 0 on
  // --help, 2 on an unknown option.
  void done(const char* what) {
    threads = static_cast<int>(integer("threads", threads));
    json = text("json", "");
    for (int i = 1; i < argc_; ++i)
      if (!std::strcmp(argv_[i], "--help") || !std::strcmp(argv_[i], "-h")) {
        std::printf("%s\noptions (default):\n%senv: DCUDA_RANKS_PER_GPU=N (all resident blocks)\n", what, usage_.c_str());
        std::exit(0);
      }
    for (int i = 1; i < argc_; ++i) {
      const char* a = argv_[i];
      bool known = false;
      for (auto& n : names_) {
        const size_t k = n.size();
        if (!std::strncmp(a, "--", 2) && !std::strncmp(a + 2, n.c_str(), k) && (a[2 + k] == 0 || a[2 + k] == '=')) {
          known = true;
          if (a[2 + k] == 0 && !is_flag(n)) ++i;  // its value
          break;
        }
      }
      if (!known) {
        std::fprintf(stderr, "unknown argument %s (--help lists the options)\n", a);
        std::exit(2);
      }
    }
  }

 private:
  void add(const char* name, const std::string& rest) {
    names_.push_back(name);
    usage_ += std::string("  --") + name + rest + "\n";
  }
  bool is_flag(const std::string& n) const {
    for (auto& f : flags_)
      if (f == n) return true;
    return false;
  }
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
  [[noreturn]] static void bad(const char* name, const char* v) {
    std::fprintf(stderr, "--%s: not a number: '%s'\n", name, v);
    std::exit(2);
  }
  int argc_;
  char** argv_;
  std::string usage_;
  std::vector<std::string> names_, flags_;
};

// This process's place in the dcuda world (from dcuda_host_get_rank_info's dcuda_rank_info).
struct World {
  int ranks = 0;      // world size (rank_count)
  int first = 0;      // this process's first world rank (rank_start)
  int here = 0;       // its ranks: first .. first + here - 1 (rank_responsible)
  int process = 0, processes = 1;
};

// A dcuda context for `kernel` at `threads` per rank; exits 77 (ctest's skip) without a GPU and 2
// on failure (dcuda_host_init has printed why; the failed context is finished first).
inline dcuda_host_context_handle start_dcuda(dcuda_kernel_t kernel, int threads, World* w) {
  dcuda_host_context_handle ctx = nullptr;
  if (threads < 32 || threads % 32 || threads > 1024) {
    std::fprintf(stderr, "threads per rank must be a multiple of 32 in 32..1024\n");
    std::exit(2);
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::puts("skipped: no GPU");
    std::exit(77);
  }
  dcuda_host_init(0, nullptr, &ctx, kernel, threads);
  if (dcuda_host_status(ctx) != DCUDA_SUCCESS) {
    dcuda_host_finish(ctx);
    std::exit(2);
  }
  dcuda_rank_info info;
  dcuda_host_get_rank_info(ctx, &info);
  w->ranks = info.rank_count;
  w->first = info.rank_start;
  w->here = info.rank_responsible;
  w->process = info.process_index;
  w->processes = info.process_count;
  return ctx;
}

// dcuda_host_run (which copies `args` to the device for dcuda_get_data and back after the
// kernel), exiting with the rank's error on failure.
inline double run_dcuda(dcuda_host_context_handle ctx, void* args, size_t bytes) {
  const double ms = dcuda_host_run(ctx, args, bytes);
  if (ms < 0) {
    std::fprintf(stderr, "dcuda run failed (%g): %s\n", ms, dcuda_host_error(ctx));
    std::exit(2);
  }
  return ms;
}

// What each case's kernel reads first, through the reference interface: its Args (the data given
// to dcuda_host_run), its world rank, the world's size and the ranks of this device.
template <class Args>
struct RankStart {
  Args a;
  int r, ranks, device_ranks;
};
template <class Args>
__device__ RankStart<Args> rank_start(dcuda_state& c) {
  RankStart<Args> s;
  void* data;
  dcuda_get_data(c, &data);
  s.a = *static_cast<const Args*>(data);
  dcuda_comm_rank(c, DCUDA_COMM_WORLD, &s.r);
  dcuda_comm_size(c, DCUDA_COMM_WORLD, &s.ranks);
  dcuda_comm_size(c, DCUDA_COMM_DEVICE, &s.device_ranks);
  return s;
}

// dcuda windows, put offsets and sizes are ints: exits 2 (before any run) when a window of
// `bytes` would not fit one, naming the program and the window.
inline void check_window_bytes(const char* program, const char* window, double bytes) {
  if (bytes > 2147483647.0) {
    std::fprintf(stderr, "%s: the %s window (%.0f bytes) exceeds dcuda's int sizes; choose smaller sizes\n", program, window,
                 bytes);
    std::exit(2);
  }
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

// The time of `run(count)` from the state `reset()` makes, after a warm-up `run(1)` from it too.
template <class Reset, class Run>
double warm_then_time(Reset&& reset, Run&& run, int count) {
  reset();
  run(1);
  reset();
  return run(count);
}

// `count` doubles at `device` (cudaMemcpy), appended to `out`.
inline void append_from_device(std::vector<double>& out, const double* device, size_t count) {
  const size_t at = out.size();
  out.resize(at + count);
  CASE_CHECK(cudaMemcpy(out.data() + at, device, sizeof(double) * count, cudaMemcpyDeviceToHost));
}

// Compares two results: bitwise, and the largest relative difference max|a-b| / max|b|.
struct Check {
  bool bitwise = true;
  double rel = 0;
  size_t first_difference = 0;
  size_t count = 0;  // values compared
};
inline Check compare(const std::vector<double>& got, const std::vector<double>& want) {
  Check c;
  c.count = want.size();
  double diff = 0, scale = 0;
  if (got.size() != want.size()) return Check{false, INFINITY, 0, want.size()};
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

// One result: a line of KEY=VALUE words (first word `dcuda-case`), optionally JSON. Returns the
// exit status: 0 when the results agree (bitwise where the tolerance is 0, else within it relative
// to the largest value) and nothing else failed, 1 if not.
//   dcuda-case case=stencil ranks=264 processes=1 process=0 dcuda_ms=12.3 baseline_ms=45.6
//     ratio=3.71 check=ok bitwise=yes max_rel_diff=0 checked=10813440 tolerance=1e-12 threads=256 nx=64 ...
// ratio: baseline_ms / dcuda_ms (above 1: dcuda is faster).
struct Report {
  std::string program;
  World world;
  std::string baseline_kind;
  double dcuda_ms = 0, baseline_ms = 0;
  Check check;
  double tolerance = 0;
  bool exact = true;
  std::vector<std::pair<std::string, double>> sizes;  // threads, per-rank sizes, iterations...
  std::vector<std::pair<std::string, double>> extra;  // figures of the result (e.g. eigenvalue)
  bool failed = false;                                 // another check of the program's failed (said on its own line)

  Report(std::string program_, const World& world_, std::string baseline_kind_, double dcuda_ms_, double baseline_ms_,
         Check check_, double tolerance_)
      : program(std::move(program_)), world(world_), baseline_kind(std::move(baseline_kind_)), dcuda_ms(dcuda_ms_),
        baseline_ms(baseline_ms_), check(check_), tolerance(tolerance_), exact(tolerance_ == 0) {}

  bool ok() const { return !failed && (exact ? check.bitwise : check.rel <= tolerance); }

  int finish(const std::string& json_path) const {
    std::string line = "dcuda-case case=" + program;
    auto add = [&](const char* k, double v, const char* format) {
      char b[96];
      std::snprintf(b, sizeof b, format, v);
      line += std::string(" ") + k + "=" + b;
    };
    add("ranks", world.ranks, "%.0f");
    add("processes", world.processes, "%.0f");
    add("process", world.process, "%.0f");
    add("dcuda_ms", dcuda_ms, "%.4f");
    add("baseline_ms", baseline_ms, "%.4f");
    add("ratio", baseline_ms / dcuda_ms, "%.4f");
    line += ok() ? " check=ok" : " check=FAIL";
    line += check.bitwise ? " bitwise=yes" : " bitwise=no";
    add("max_rel_diff", check.rel, "%.3g");
    add("checked", static_cast<double>(check.count), "%.0f");
    if (exact) line += " tolerance=bitwise";
    else add("tolerance", tolerance, "%.3g");
    for (auto& [k, v] : sizes) add(k.c_str(), v, "%.17g");
    for (auto& [k, v] : extra) add(k.c_str(), v, "%.17g");
    std::printf("%s\n", line.c_str());
    std::printf("%s: baseline: %s\n", program.c_str(), baseline_kind.c_str());
    if (!check.bitwise) std::printf("%s: first difference at element %zu\n", program.c_str(), check.first_difference);
    if (!json_path.empty()) {
      // One file per process: PATH, or with several processes PATH's name + ".p<process>".
      std::string path = json_path;
      if (world.processes > 1) {
        const size_t dot = path.rfind('.'), slash = path.rfind('/');
        const std::string tag = ".p" + std::to_string(world.process);
        if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) path.insert(dot, tag);
        else path += tag;
      }
      FILE* f = std::fopen(path.c_str(), "w");
      if (!f) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        return 1;
      }
      std::fprintf(f, "{\"case\": \"%s\", \"baseline\": \"%s\", \"ranks\": %d, \"processes\": %d, \"process\": %d",
                   program.c_str(), baseline_kind.c_str(), world.ranks, world.processes, world.process);
      for (auto& [k, v] : sizes) std::fprintf(f, ", \"%s\": %.17g", k.c_str(), v);
      for (auto& [k, v] : extra) std::fprintf(f, ", \"%s\": %.17g", k.c_str(), v);
      // (A difference of NaN or infinity, e.g. results of different lengths, is JSON's null.)
      char rel[32] = "null";
      if (std::isfinite(check.rel)) std::snprintf(rel, sizeof rel, "%.6g", check.rel);
      std::fprintf(f,
                   ", \"dcuda_ms\": %.6f, \"baseline_ms\": %.6f, \"ratio\": %.6f, \"bitwise_equal\": %s, "
                   "\"max_relative_difference\": %s, \"values_checked\": %zu, \"tolerance\": %.6g, \"ok\": %s}\n",
                   dcuda_ms, baseline_ms, baseline_ms / dcuda_ms, check.bitwise ? "true" : "false", rel, check.count,
                   exact ? 0.0 : tolerance, ok() ? "true" : "false");
      std::fclose(f);
    }
    return ok() ? 0 : 1;
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
