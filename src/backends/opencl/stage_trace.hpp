// Where an answered command's time goes on the server, for finding what a remote round trip pays
// above the native one: with OUTBOARD_CL_TRACE=1 in the server's environment, every command a
// client waits for (an answered request) records when its message reached the session's queue
// (the progress thread), when the session's runner took it, when the native enqueue returned, and
// when its completion was reported; and for every operation, answered or not, its time in the
// queue and in the runner. At each session's end the server logs the medians and 90th
// percentiles per operation ("opencl.trace ..."). Off, it costs one branch per operation.
#pragma once
#include <cstdint>
#include <string>

namespace outboard::backends {

struct StageTimes {
  uint64_t arrived_ns = 0;   // 0: not traced
  uint64_t started_ns = 0;   // the runner took it
  uint64_t enqueued_ns = 0;  // the native call returned
  uint64_t call_id = 0;      // the request's (OUTBOARD_CL_TRACE_CALLS)
};

namespace stage_trace {
bool enabled();
// One command's stages, ended now.
void record(const char* op, const StageTimes& t);
// Any operation's time in the runner's queue and its run there (answered or not), ended now.
void record_run(const char* op, uint64_t arrived_ns, uint64_t started_ns);
// A part of an operation's run on the session's thread (`what`: "finish.flush", say), `ns` long.
void record_part(const char* what, uint64_t ns);
// Logs and forgets what was recorded.
void report();
}  // namespace stage_trace

}  // namespace outboard::backends
