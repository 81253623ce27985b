#include "client/call_trace.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/trace.hpp"

namespace outboard::client::call_trace {
namespace {

constexpr size_t kMaxSamples = 1 << 20;  // per operation

// Printed when the program exits.
struct Store {
  std::mutex mu;
  std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> by_op;  // answer, hand-off (ns)
  ~Store() {
    for (auto& [op, s] : by_op)
      std::fprintf(stderr, "outboard.cl_trace op=%s count=%zu answer_us=%.2f/%.2f handoff_us=%.2f/%.2f (median/p90)\n",
                   op.c_str(), s.first.size(), trace::percentile_us(s.first, 0.5), trace::percentile_us(s.first, 0.9),
                   trace::percentile_us(s.second, 0.5), trace::percentile_us(s.second, 0.9));
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

void record(const char* op, uint64_t sent_ns, uint64_t received_ns) {
  const uint64_t now = now_ns();
  Store& s = store();
  std::lock_guard lk(s.mu);
  auto& [answer, handoff] = s.by_op[op];
  if (answer.size() >= kMaxSamples) return;
  answer.push_back(received_ns - sent_ns);
  handoff.push_back(now - received_ns);
}

}  // namespace outboard::client::call_trace
