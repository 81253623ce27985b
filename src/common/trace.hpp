// What the opt-in traces share (the OpenCL server's stage_trace, the client's call_trace, the dcuda
// proxy's trace): their switch, an environment variable read once. Their durations go into
// common/latency_histogram.hpp.
#pragma once
#include <cstdlib>
#include <cstring>

namespace outboard::trace {

// OUTBOARD_CL_TRACE_CALLS=PREFIX: where per-call timestamps go (common/call_log.hpp); nullptr: off.
inline const char* calls_prefix() {
  static const char* prefix = [] {
    const char* p = std::getenv("OUTBOARD_CL_TRACE_CALLS");
    return p && *p ? p : nullptr;
  }();
  return prefix;
}
// Whether the variable is set to something other than "" or "0".
inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace outboard::trace
