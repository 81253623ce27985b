// Pipelined execution on a host backend: steps run one after another on the compute pool, each
// as soon as the input it reads has arrived.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "server/compute_pool.hpp"
#include "server/pipeline.hpp"
#include "server/services/blas3_executor.hpp"

namespace outboard::server {

// One piece of work: it may start once payload bytes [0, input_needed) have arrived; when it
// ends, the result pieces `finishes` are complete. Returns LAPACK's INFO (0 for BLAS); throws on
// failure. It runs on a compute thread while the pipeline exists (the pipeline's destructor waits).
struct PoolStep {
  uint64_t input_needed = 0;
  std::function<int64_t()> run;
  std::vector<size_t> finishes;
};

// `wake` is called from a compute thread when a step has finished (to wake the progress thread).
std::unique_ptr<Pipeline> make_pool_pipeline(std::vector<PoolStep> steps, ComputePool& pool,
                                             std::function<void()> wake);

// A Level-3 plan: a step per block, running the executor's level3(), in the plan's order.
std::unique_ptr<Pipeline> make_pool_pipeline(Blas3Executor& executor, const Plan& plan, std::byte* staging,
                                             ComputePool& pool, std::function<void()> wake);

}  // namespace outboard::server
