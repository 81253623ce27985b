#include "client/call_trace.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "common/call_log.hpp"
#include "common/clock.hpp"
#include "common/latency_histogram.hpp"
#include "common/trace.hpp"

namespace outboard::client::call_trace {
namespace {

// Printed when the program exits.
struct Store {
  struct Op {
    LatencyHistogram answer, handoff;
  };
  std::mutex mu;
  std::map<std::string, Op> by_op;
  trace::CallLog calls{"client"};  // OUTBOARD_CL_TRACE_CALLS: written when the program exits
  ~Store() {
    for (const auto& [op, s] : by_op)
      std::fprintf(stderr, "outboard.cl_trace op=%s count=%llu answer_us=%.2f/%.2f handoff_us=%.2f/%.2f (median/p90)\n",
                   op.c_str(), static_cast<unsigned long long>(s.answer.count()), s.answer.quantile_us(0.5),
                   s.answer.quantile_us(0.9), s.handoff.quantile_us(0.5), s.handoff.quantile_us(0.9));
  }
};
Store& store() {
  static Store s;
  return s;
}

}  // namespace

bool enabled() {
  static const bool on = trace::env_flag("OUTBOARD_CL_TRACE");
  return on;
}

void record(const char* op, const CallTimes& t) {
  const uint64_t now = now_ns();
  Store& s = store();
  if (trace::CallLog::enabled()) s.calls.add(op, t.call_id, {t.sent_ns, t.posted_ns, t.arrived_ns, t.received_ns, now});
  std::lock_guard lk(s.mu);
  Store::Op& o = s.by_op[op];
  o.answer.add(t.received_ns - t.sent_ns);
  o.handoff.add(now - t.received_ns);
}

void connected(const std::string& server, uint64_t began, uint64_t transport_ready, uint64_t challenged,
               uint64_t accepted, uint64_t described) {
  auto ms = [](uint64_t from, uint64_t to) { return to > from ? (to - from) * 1e-6 : 0.0; };
  std::fprintf(stderr,
               "outboard.cl_trace connect server=%s transport_ms=%.2f challenge_ms=%.2f accept_ms=%.2f "
               "platforms_ms=%.2f total_ms=%.2f\n",
               server.c_str(), ms(began, transport_ready), ms(transport_ready, challenged), ms(challenged, accepted),
               ms(accepted, described), ms(began, described));
}

}  // namespace outboard::client::call_trace
