// Pipelined LAPACK calls: the input arrives in chunks (wire::LapackChunk) into a staging buffer
// that holds the packed inputs (the payload, in wire::layout order) followed by the packed
// outputs (the result); the result leaves in pieces (wire::ReplyChunk) as soon as each is there.
// A device backend copies each chunk to the GPU as it lands, so when the last one is in only
// the computation and the copies back remain.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "server/compute_pool.hpp"
#include "server/pipeline.hpp"
#include "server/services/lapack_executor.hpp"
#include "wire/lapack.hpp"

namespace outboard::server {

struct LapackPlan {
  wire::LapackCall call;
  uint64_t input_bytes = 0;    // the payload
  uint64_t output_bytes = 0;   // the result, from offset input_bytes
  uint64_t staging_bytes = 0;  // both
  std::vector<uint64_t> input_offsets, output_offsets;  // of each array in the staging buffer
  // The result in order, at most piece_bytes each; none spans two arrays (so a client can land
  // each piece straight in the array it belongs to).
  std::vector<ResultPiece> pieces;
};

LapackPlan plan_lapack(const wire::LapackCall& c, uint64_t piece_bytes);

// The arrays of a plan laid out from `base` (the staging buffer, or a device copy of it), as
// LapackExecutor::lapack takes them.
struct LapackArrays {
  std::vector<const std::byte*> inputs;
  std::vector<std::byte*> outputs;
};
LapackArrays lapack_arrays(const LapackPlan& p, std::byte* base);

// Readies the output arrays in the staging buffer for an in-place run: those updated in place get
// their input's values, the others zeros.
void prepare_outputs(const LapackPlan& p, std::byte* staging);

// A host backend (or a device backend without a pipeline of its own): the whole call on the
// compute pool once all of its input is in (checked first: wire::check_inputs).
std::unique_ptr<Pipeline> make_pool_lapack_pipeline(LapackExecutor& executor, const LapackPlan& plan,
                                                    std::byte* staging, ComputePool& pool,
                                                    std::function<void()> wake);

}  // namespace outboard::server
