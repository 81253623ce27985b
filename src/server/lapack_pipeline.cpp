#include "server/lapack_pipeline.hpp"

#include <algorithm>
#include <cstring>

#include "server/pool_pipeline.hpp"

namespace outboard::server {

LapackPlan plan_lapack(const wire::LapackCall& c, uint64_t piece_bytes) {
  const wire::LapackLayout l = wire::layout(c);
  piece_bytes = std::max<uint64_t>(piece_bytes, 1);
  LapackPlan p;
  p.call = c;
  uint64_t at = 0;
  for (const auto& a : l.inputs) {
    p.input_offsets.push_back(at);
    at += wire::array_bytes(a, c.scalar);
  }
  p.input_bytes = at;
  for (const auto& a : l.outputs) {
    p.output_offsets.push_back(at);
    const uint64_t bytes = wire::array_bytes(a, c.scalar);
    for (uint64_t off = 0; off < bytes; off += piece_bytes)
      p.pieces.push_back({at + off, std::min(piece_bytes, bytes - off), at + off - p.input_bytes});
    at += bytes;
  }
  // A call whose result is empty (getrs with nrhs = 0, say) still has one piece, of no bytes: the
  // call is answered once that piece is finished, that is once the call has run (its inputs
  // checked, its INFO known), not as soon as its input is in (found by fuzz_session: such a call
  // was answered "done" or "bad pivot index" depending on which thread came first).
  if (p.pieces.empty()) p.pieces.push_back({at, 0, 0});
  p.output_bytes = at - p.input_bytes;
  p.staging_bytes = at;
  return p;
}

LapackArrays lapack_arrays(const LapackPlan& p, std::byte* base) {
  LapackArrays a;
  for (uint64_t off : p.input_offsets) a.inputs.push_back(base + off);
  for (uint64_t off : p.output_offsets) a.outputs.push_back(base + off);
  return a;
}

void prepare_outputs(const LapackPlan& p, std::byte* staging) {
  const wire::LapackLayout l = wire::layout(p.call);
  for (size_t i = 0; i < l.outputs.size(); ++i) {
    const auto& o = l.outputs[i];
    std::byte* dst = staging + p.output_offsets[i];
    const uint64_t bytes = wire::array_bytes(o, p.call.scalar);
    if (o.from_input >= 0) std::memcpy(dst, staging + p.input_offsets[o.from_input], bytes);
    else std::memset(dst, 0, bytes);
  }
}

std::unique_ptr<Pipeline> make_pool_lapack_pipeline(LapackExecutor& executor, const LapackPlan& plan,
                                                    std::byte* staging, ComputePool& pool,
                                                    std::function<void()> wake) {
  PoolStep step;
  step.input_needed = plan.input_bytes;
  step.run = [&executor, plan, staging]() -> int64_t {
    LapackArrays a = lapack_arrays(plan, staging);
    wire::check_inputs(plan.call, a.inputs.data());
    prepare_outputs(plan, staging);
    DeviceTiming timing;
    return executor.lapack(plan.call, a.inputs, a.outputs, timing);
  };
  for (size_t i = 0; i < plan.pieces.size(); ++i) step.finishes.push_back(i);
  std::vector<PoolStep> steps;
  steps.push_back(std::move(step));
  return make_pool_pipeline(std::move(steps), pool, std::move(wake));
}

}  // namespace outboard::server
