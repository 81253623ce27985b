// What the opt-in traces share (the OpenCL server's stage_trace, the client's call_trace, the dcuda
// proxy's trace): their switch, an environment variable read once. Their durations go into
// common/latency_histogram.hpp.
#pragma once
#include <cstdlib>
#include <cstring>

namespace outboard::trace {

// Whether the variable is set to something other than "" or "0".
inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace outboard::trace
