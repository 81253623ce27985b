#include "backends/opencl/stage_trace.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <string>

#include "common/call_log.hpp"
#include "common/clock.hpp"
#include "common/latency_histogram.hpp"
#include "common/trace.hpp"

namespace outboard::backends::stage_trace {
namespace {

struct Samples {
  LatencyHistogram queued, enqueue, completion, total;
};
struct Runs {
  LatencyHistogram queued, run;
};

std::mutex mu;
std::map<std::string, Samples> by_op;
std::map<std::string, Runs> runs_by_op;
std::map<std::string, LatencyHistogram> parts;
trace::CallLog calls{"server"};  // OUTBOARD_CL_TRACE_CALLS: written at each session's end

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
  s.queued.add(t.started_ns - t.arrived_ns);
  s.enqueue.add(t.enqueued_ns - t.started_ns);
  s.completion.add(done - t.enqueued_ns);
  s.total.add(done - t.arrived_ns);
  if (trace::CallLog::enabled()) calls.add(op, t.call_id, {t.arrived_ns, t.started_ns, t.enqueued_ns, done});
}

void record_run(const char* op, uint64_t arrived_ns, uint64_t started_ns) {
  const uint64_t done = now_ns();
  std::lock_guard lk(mu);
  Runs& r = runs_by_op[op];
  r.queued.add(started_ns - arrived_ns);
  r.run.add(done - started_ns);
}

void record_part(const char* what, uint64_t ns) {
  std::lock_guard lk(mu);
  parts[what].add(ns);
}

void report() {
  std::lock_guard lk(mu);
  calls.write();
  for (const auto& [what, h] : parts)
    spdlog::info("opencl.trace part={} count={} us={:.2f}/{:.2f} (median/p90)", what, h.count(), h.quantile_us(0.5),
                 h.quantile_us(0.9));
  parts.clear();
  for (const auto& [op, r] : runs_by_op)
    spdlog::info("opencl.trace op={} runs={} queued_us={:.2f}/{:.2f} run_us={:.2f}/{:.2f} (median/p90)", op,
                 r.run.count(), r.queued.quantile_us(0.5), r.queued.quantile_us(0.9), r.run.quantile_us(0.5),
                 r.run.quantile_us(0.9));
  runs_by_op.clear();
  for (const auto& [op, s] : by_op)
    spdlog::info(
        "opencl.trace op={} count={} queued_us={:.2f}/{:.2f} enqueue_us={:.2f}/{:.2f} completion_us={:.2f}/{:.2f} "
        "total_us={:.2f}/{:.2f} (median/p90)",
        op, s.total.count(), s.queued.quantile_us(0.5), s.queued.quantile_us(0.9), s.enqueue.quantile_us(0.5),
        s.enqueue.quantile_us(0.9), s.completion.quantile_us(0.5), s.completion.quantile_us(0.9),
        s.total.quantile_us(0.5), s.total.quantile_us(0.9));
  by_op.clear();
}

}  // namespace outboard::backends::stage_trace
