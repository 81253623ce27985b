// Pipelined execution on a host backend: blocks run one after another on the compute pool, each
// as soon as its input has arrived.
#pragma once
#include <functional>
#include <memory>

#include "server/backend.hpp"
#include "server/compute_pool.hpp"
#include "server/pipeline.hpp"

namespace outboard::server {

// `wake` is called from a compute thread when a block has finished (to wake the progress thread).
std::unique_ptr<Pipeline> make_pool_pipeline(Backend& backend, Plan plan, std::byte* staging, ComputePool& pool,
                                             std::function<void()> wake);

}  // namespace outboard::server
