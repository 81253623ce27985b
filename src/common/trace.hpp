// What the opt-in traces share (the OpenCL server's stage_trace, the client's call_trace): their
// switch, an environment variable read once, and the percentiles they report.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace outboard::trace {

// Whether the variable is set to something other than "" or "0".
inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

// The q-quantile (0..1) of samples in ns, in us; reorders them. 0 when there are none.
inline double percentile_us(std::vector<uint64_t>& v, double q) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * double(v.size())));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return double(v[i]) / 1e3;
}

}  // namespace outboard::trace
