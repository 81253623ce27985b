// Host<->GPU copy benchmarks (`outboard bench memcpy`) and local GPU GEMM series, through the CUDA
// plugin (backends/cuda/loader.hpp). Without a usable GPU they throw Unavailable: the caller
// prints the reason and exits with kExitSkipped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/sweep.hpp"
#include "common/error.hpp"

namespace outboard::bench {

// No CUDA backend here (no plugin, no driver, no device); what() says which.
class Unavailable : public Error {
 public:
  using Error::Error;
};

// Exit status of a benchmark that was skipped because what it measures is not here.
inline constexpr int kExitSkipped = 77;

// Which series to run. Patterns:
//   streaming  one-way copies back to back (each a synchronous cudaMemcpy; the device is
//              synchronized once at the end); seconds per copy = total / repeats.
//              Series: H2D and D2H for each host memory kind, and D2D.
//   pingpong   a copy there and one back, each waiting for the other; seconds per one-way copy =
//              round trip / 2. Series: the round trip H2D then D2H of the same buffers for each
//              host memory kind ("H2D+D2H pinned pingpong"), and D2D (buffer A to B, then B to A).
// Host memory: paged (malloc, every page touched before timing) or pinned (cudaHostAlloc).
struct MemcpyOptions {
  bool h2d = true, d2h = true, d2d = true, roundtrip = true;  // directions
  bool paged = true, pinned = true;                           // host memory kinds
  bool streaming = true, pingpong = true;                     // patterns
  bool validate = true;                                       // the "validation" object
  int device = 0;
};

using MemcpyProgress = std::function<void(const std::string& series, const Point&, size_t index, size_t count)>;

// Runs the selected series with run_sweep (host clock, std::chrono::steady_clock) and returns a
// partial result document (results.hpp) to apply with doc.merge_patch(result):
//   {"machine": {"gpu": {...}}, "software": {"cuda_driver", "cuda_runtime", "cublas"},
//    "options": {"memcpy": {...}}, "series": [...transfer series...], "validation": {...}}
// Each series also carries "direction" (h2d|d2h|d2d|roundtrip), "memory" (paged|pinned|device)
// and "device". Throws Unavailable without a usable GPU, Error when a CUDA call fails.
nlohmann::json run_memcpy_bench(const SweepOptions& sweep, const MemcpyOptions& options = {},
                                 const MemcpyProgress& progress = {});

// The GPU `device` and the CUDA software, as run_memcpy_bench reports them ("gpu" and
// "software"). Throws Unavailable without a usable GPU.
nlohmann::json describe_gpu(int device = 0);
nlohmann::json describe_cuda_software();

struct GpuGemmOptions {
  int device = 0;
  int trials = 3;               // each point is the best of these
  double target_seconds = 0.2;  // about how long one trial lasts
};

// A "local-gpu" gemm series (results.hpp): cuBLAS {S,D,C,Z}GEMM, C = A*B, n x n, for each n in
// `sizes`. compute_seconds/gflops_compute: the GEMM alone, timed with CUDA events. seconds/gflops:
// with include_transfers, H2D of A and B, the GEMM and D2H of C from and to pinned host buffers,
// timed with the host clock; without, the same as the compute figures. Flops: 2n^3 real, 8n^3
// complex. Named "<precision>gemm local-gpu" ("... (compute only)" without transfers), with
// "includes_transfers", "device" and "library" besides results.hpp's keys. Throws Unavailable
// without a usable GPU.
nlohmann::json run_gpu_gemm_series(char precision, const std::vector<int64_t>& sizes, bool include_transfers,
                                   const GpuGemmOptions& options = {},
                                   const std::function<void(const nlohmann::json& point)>& progress = {});

}  // namespace outboard::bench
