// The client's half of OUTBOARD_CL_TRACE (the server's: backends/opencl/stage_trace.hpp): with it
// set in a program's environment, every remote OpenCL call it waits for records how long its
// answer took to arrive (sent to received, on whichever thread drives the connection) and how
// long the waiting thread then took to see it; at exit the program prints the medians and 90th
// percentiles per operation to stderr ("outboard.cl_trace ..."), and how long each channel took to
// connect, step by step. Off, one branch per call.
#pragma once
#include <cstdint>
#include <string>

namespace outboard::client::call_trace {

bool enabled();
// One call's times (now_ns), up to its answer's receipt.
struct CallTimes {
  uint64_t call_id = 0;      // its request's
  uint64_t sent_ns = 0;      // the caller began to send it
  uint64_t posted_ns = 0;    // the send returned
  uint64_t arrived_ns = 0;   // the answer reached the transport's thread (OUTBOARD_CL_TRACE_CALLS only)
  uint64_t received_ns = 0;  // the answer was handed over on that thread
};
// One call, seen by the caller now. `op` is a static name. With OUTBOARD_CL_TRACE_CALLS its times
// are also written at exit (common/call_log.hpp).
void record(const char* op, const CallTimes& times);
// A channel to `server` made: its steps' ends (now_ns) from `began`; printed at once
// ("outboard.cl_trace connect ...", in ms).
void connected(const std::string& server, uint64_t began, uint64_t transport_ready, uint64_t challenged,
               uint64_t accepted, uint64_t described);

}  // namespace outboard::client::call_trace
