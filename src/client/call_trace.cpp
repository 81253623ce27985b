#include "client/call_trace.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.hpp"

namespace outboard::client::call_trace {
namespace {

constexpr size_t kMaxSamples = 1 << 20;  // per operation

double percentile_us(std::vector<uint64_t>& v, double q) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * double(v.size())));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return double(v[i]) / 1e3;
}

// Printed when the program exits.
struct Store {
  std::mutex mu;
  std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> by_op;  // answer, hand-off (ns)
  ~Store() {
    for (auto& [op, s] : by_op)
      std::fprintf(stderr, "outboard.cl_trace op=%s count=%zu answer_us=%.2f/%.2f handoff_us=%.2f/%.2f (median/p90)\n",
                   op.c_str(), s.first.size(), percentile_us(s.first, 0.5), percentile_us(s.first, 0.9),
                   percentile_us(s.second, 0.5), percentile_us(s.second, 0.9));
  }
};
Store& store() {
  static Store s;
  return s;
}

}  // namespace

bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("OUTBOARD_CL_TRACE");
    return v && *v && std::string(v) != "0";
  }();
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
