// The server's GPU backend, through the CUDA plugin: Level-3 BLAS on cuBLAS (server::Blas3Executor:
// whole calls, and pipelined ones: gpu_pipeline.hpp), LAPACK on cuSOLVER (server::LapackExecutor),
// and the device transfers that `outboard bench remote` measures.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda/gpu_fft.hpp"
#include "server/backend.hpp"
#include "server/services/blas3_executor.hpp"
#include "server/services/lapack_executor.hpp"

namespace outboard::backends {

// nullptr, with the reason in `why`, where no CUDA device can be used. memory_budget: the most
// device memory one pipelined call may use before it is tiled; 0: 85% of the GPU's memory.
// fft_memory_budget: what cuFFT plans and their buffers may hold (server::FftExecutor, gpu_fft.hpp);
// 0: 40% of the GPU's memory.
std::unique_ptr<server::Backend> make_cuda_backend(std::string& why, int device = 0, uint64_t memory_budget = 0,
                                                   uint64_t fft_memory_budget = 0);

}  // namespace outboard::backends
