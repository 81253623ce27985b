#include "backends/opencl/stage_trace.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "common/clock.hpp"
#include "common/trace.hpp"

namespace outboard::backends::stage_trace {
namespace {

struct Samples {
  std::vector<uint64_t> queued, enqueue, completion, total;  // ns
};
struct Runs {
  std::vector<uint64_t> queued, run;  // ns
};
// Samples kept per operation: enough for stable percentiles, bounded memory.
constexpr size_t kMaxSamples = 1 << 20;

std::mutex mu;
std::map<std::string, Samples> by_op;
std::map<std::string, Runs> runs_by_op;

}  // namespace

bool enabled() {
  static const bool on = trace::env_flag("OUTBOARD_CL_TRACE");
  return on;
}

void record(const char* op, const StageTimes& t) {
  if (!t.arrived_ns) return;
  const uint64_t done = now_ns();
  std::lock_guard lk(mu);
  Samples& s = by_op[op];
  if (s.total.size() >= kMaxSamples) return;
  s.queued.push_back(t.started_ns - t.arrived_ns);
  s.enqueue.push_back(t.enqueued_ns - t.started_ns);
  s.completion.push_back(done - t.enqueued_ns);
  s.total.push_back(done - t.arrived_ns);
}

void record_run(const char* op, uint64_t arrived_ns, uint64_t started_ns) {
  const uint64_t done = now_ns();
  std::lock_guard lk(mu);
  Runs& r = runs_by_op[op];
  if (r.run.size() >= kMaxSamples) return;
  r.queued.push_back(started_ns - arrived_ns);
  r.run.push_back(done - started_ns);
}

void report() {
  using trace::percentile_us;
  std::lock_guard lk(mu);
  for (auto& [op, r] : runs_by_op)
    spdlog::info("opencl.trace op={} runs={} queued_us={:.2f}/{:.2f} run_us={:.2f}/{:.2f} (median/p90)", op,
                 r.run.size(), percentile_us(r.queued, 0.5), percentile_us(r.queued, 0.9), percentile_us(r.run, 0.5),
                 percentile_us(r.run, 0.9));
  runs_by_op.clear();
  for (auto& [op, s] : by_op)
    spdlog::info(
        "opencl.trace op={} count={} queued_us={:.2f}/{:.2f} enqueue_us={:.2f}/{:.2f} completion_us={:.2f}/{:.2f} "
        "total_us={:.2f}/{:.2f} (median/p90)",
        op, s.total.size(), percentile_us(s.queued, 0.5), percentile_us(s.queued, 0.9), percentile_us(s.enqueue, 0.5),
        percentile_us(s.enqueue, 0.9), percentile_us(s.completion, 0.5), percentile_us(s.completion, 0.9),
        percentile_us(s.total, 0.5), percentile_us(s.total, 0.9));
  by_op.clear();
}

}  // namespace outboard::backends::stage_trace
