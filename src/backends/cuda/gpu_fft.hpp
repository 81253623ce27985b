// The GPU FFT executor: cuFFT through the CUDA plugin. Each cached plan is a slot — a cuFFT plan
// with its device buffers and stream — used by one execution at a time; slots are cached by shape
// across sessions (idle ones evicted least recently used first, and when device memory runs out),
// and a shape executed by several threads at once gets several slots. Executions copy the dense
// input to the device, run cuFFT and copy the output back; pipelined ones copy each chunk as it
// lands, on a thread of their own, so the server's progress thread never waits for the GPU.
#pragma once
#include <memory>

#include "backends/cuda/loader.hpp"
#include "server/services/fft_executor.hpp"

namespace outboard::backends {

struct GpuFftOptions {
  uint64_t memory_budget = 0;  // device memory all slots may hold together
  size_t max_idle_slots = 16;
  int64_t max_slices = 8;  // batch slices of a batched execution (gpu_fft.cpp); 1: one cuFFT call
};

class GpuFftExecutor : public server::FftExecutor {
 public:
  // After the GPU faulted, before it is reset: forgets every plan and buffer without touching the
  // GPU (the reset frees them). Nothing may use the executor meanwhile or after.
  virtual void abandon() = 0;
};

// `plugin` must outlive the executor.
std::unique_ptr<GpuFftExecutor> make_gpu_fft(const cuda::CudaPlugin& plugin, int device, GpuFftOptions options);

}  // namespace outboard::backends
