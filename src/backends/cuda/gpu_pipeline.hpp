// Pipelined Level-3 calls on a GPU: each chunk of input is copied to the device as soon as it has
// landed in (page-locked) staging memory, each block is computed as soon as its input is on the
// device, and each result piece is copied back while later blocks compute. Three streams (in,
// compute, out) ordered by events; the blocks run in plan order on the compute stream, so blocks
// that read what earlier ones wrote (pipeline.hpp's inner and substitution orders) see it;
// nothing on the server's progress thread waits for the GPU.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backends/cuda/loader.hpp"
#include "server/lapack_pipeline.hpp"
#include "server/pipeline.hpp"

namespace outboard::backends {

// The plugin's description of a call whose operands have leading dimensions `ld` (0: packed,
// leading dimension = rows; level3_async takes any, level3 packed ones only).
outboard_cuda_level3 plugin_call(const wire::Level3Call& c, const server::LeadingDims& ld = {});
// The same for a LAPACK call on packed arrays (host or device memory), in wire::layout order; an
// output updated in place takes precedence over its input.
outboard_cuda_lapack plugin_call(const wire::LapackCall& c, std::span<const std::byte* const> inputs,
                                 std::span<std::byte* const> outputs);

// What pipelines use on one GPU, owned by its backend and lent to one pipeline at a time.
class GpuResources {
 public:
  // budget: the most device memory a pipeline may use (its operands, or a tiling of them).
  GpuResources(const cuda::CudaPlugin& plugin, int device, uint64_t budget)
      : plugin_(plugin), device_(device), budget_(budget) {}
  ~GpuResources();
  GpuResources(const GpuResources&) = delete;
  GpuResources& operator=(const GpuResources&) = delete;

  // A pipeline for `plan` (whose input lands in `staging`), or nullptr while another one runs.
  // Throws Error when the GPU cannot take it (out of device memory, say).
  std::unique_ptr<server::Pipeline> pipeline(const server::Plan& plan, std::byte* staging);
  // The same for a LAPACK call (gpu_lapack_pipeline.cpp).
  std::unique_ptr<server::Pipeline> lapack_pipeline(const server::LapackPlan& plan, std::byte* staging);
  // After the GPU faulted, before it is reset: forgets its streams, events and memory without
  // touching the GPU (the reset frees them). No pipeline may be running.
  void abandon();

 private:
  friend class GpuPipeline;
  friend class GpuLapackPipeline;
  void* event();            // from the free list, or a new one
  void recycle(void* event);
  void* reserve(size_t bytes);  // device memory for a call's operands, kept and grown

  const cuda::CudaPlugin& plugin_;
  int device_;
  uint64_t budget_;
  std::atomic<bool> busy_{false};
  void* streams_[3] = {nullptr, nullptr, nullptr};  // in, compute, out
  void* memory_ = nullptr;
  size_t capacity_ = 0;
  std::vector<void*> free_events_;
};

}  // namespace outboard::backends
