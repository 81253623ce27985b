// The server's GPU backend, through the CUDA plugin: Level-3 BLAS on cuBLAS (server::Blas3Executor:
// whole calls, and pipelined ones: gpu_pipeline.hpp), LAPACK on cuSOLVER (server::LapackExecutor),
// and the device transfers that `outboard bench remote` measures.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "backends/cuda/gpu_fft.hpp"
#include "server/backend.hpp"
#include "server/services/blas3_executor.hpp"
#include "server/services/lapack_executor.hpp"

namespace outboard::backends {

struct CudaOptions {
  // The most device memory one pipelined call may use before it is tiled; 0: 85% of the GPU's.
  uint64_t memory_budget = 0;
  // What cuFFT plans and their buffers may hold (server::FftExecutor, gpu_fft.hpp); 0: 40%.
  uint64_t fft_memory_budget = 0;
  int64_t fft_batch_slices = 8;  // cuFFT calls a batched execution is split into (gpu_fft.hpp)
  // Page-locked staging memory reserved once, by the first GPU backend as it is made (before the
  // server listens): page-locking GiBs takes seconds, during which the process stalls, so a call
  // that had to lock its staging itself took seconds longer the first time. Staging comes from
  // the reserve while it has room, else is locked per call as before.
  uint64_t pinned_reserve_bytes = 0;
  // Told why, from a thread of the backend's, when a GPU faulted and cannot be rebuilt in this
  // process (gpu_health.hpp): its calls go elsewhere meanwhile.
  std::function<void(const std::string&)> on_gpu_lost;
};

// nullptr, with the reason in `why`, where no CUDA device can be used.
std::unique_ptr<server::Backend> make_cuda_backend(std::string& why, int device = 0, const CudaOptions& options = {});
// The GPUs this process can use (0, with the reason in `why`, where none). Initialises CUDA in
// the calling process.
int cuda_device_count(std::string& why);

}  // namespace outboard::backends
