// Large buffer transfers on the direct path (wire::ClDirectRead, ClDirectWrite), blocking or not:
// the native platform and the server's copy lanes (server::ClClientMemory) move the data in
// pieces, each piece's two hops overlapping its neighbours'. In the program's queue a transfer is
// two markers: its start (after what the command waits for) and its end (waiting for a user event
// set once every piece has moved), so later commands of the queue still come after it. Between
// them the pieces run on a queue of the server's own (the mover, on the same device), each as
// soon as the session's staging budget (staging_budget.hpp) has room for it: a read's device read
// of a piece, then the lanes' copy into the client's memory; a write's fetch from the client's
// memory, then the piece's device write. The session (cl_memory_direct.cpp) checks the operation
// against its objects first; these run its native commands.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/opencl/event_waiter.hpp"
#include "backends/opencl/native.hpp"
#include "backends/opencl/staging_budget.hpp"

namespace outboard::backends {

// What the transfers of one session share with it.
struct DirectSession {
  std::shared_ptr<server::ClOutput> out;
  std::shared_ptr<server::ClClientMemory> memory;
  std::shared_ptr<StagingBudget> staging;
  SharedCounters* counters = nullptr;
  EventWaiter* waiter = nullptr;  // lives until the session's outstanding callbacks have run
  // The session's callbacks not yet run: its end waits for them (a transfer counts as one).
  std::shared_ptr<std::atomic<int64_t>> outstanding;
};

// One transfer, checked: `bytes` at `offset` of buffer `mem`, from or to the client's `address`
// in `region` (opened for this transfer; dropped once the lanes are done with it).
struct DirectTransfer {
  bool write = false;
  cl_command_queue queue = nullptr;  // the program's
  cl_command_queue mover = nullptr;  // the pieces' (the session's, for this queue)
  cl_context context = nullptr;      // the queue's (the end's user event)
  cl_mem mem = nullptr;
  uint64_t offset = 0, bytes = 0;
  std::vector<cl_event> wait;  // the command's wait list
  server::ClClientMemory::Region region;
  uint64_t address = 0;
  uint64_t call_id = 0;
  wire::ClId event = 0;  // the program's event (0: none)
  // A read whose result goes in pieces over the session's lanes (reply_pieces.hpp), not by the
  // copy lanes: answered with ClOutput::reply_pieces.
  bool pieces = false;
};

// An operation that could not start (nothing is in flight): the CL error and what failed.
struct DirectFail {
  cl_int code;
  std::string what;
};

// Starts a transfer. Returns the native event of its end in the program's queue (later commands
// wait for it; the caller keeps it for the program's event or releases it), or throws DirectFail
// (nothing started then; the region is dropped). A read is answered once its data is in the
// client's memory, a write once the lanes have fetched all of it (the client's memory is free);
// either reports the program's event once every piece has moved, or the transfer failed.
cl_event direct_transfer(const DirectSession& s, const DirectTransfer& t);

// A lane copies at least this much of a piece: smaller splits cost more than they overlap.
inline constexpr uint64_t kMinLaneCopyBytes = 1 << 20;

}  // namespace outboard::backends
