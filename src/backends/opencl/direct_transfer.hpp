// Large buffer transfers on the direct path (wire::ClDirectRead, ClDirectWrite): the native
// platform and the server's copy lanes (server::ClClientMemory) move the data in pieces, each
// piece's two hops overlapping the other pieces'. A read enqueues every piece's device read at
// once; as each piece lands in host memory the lanes write it into the client's memory. A write
// has the lanes fetch every piece from the client's memory at once; each piece's device write
// waits (on a user event) only for its own piece. The session (cl_session.cpp) checks the
// operation against its objects first; these run its native commands.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/opencl/event_waiter.hpp"
#include "backends/opencl/native.hpp"

namespace outboard::backends {

// What the transfers of one session share with it.
struct DirectSession {
  std::shared_ptr<server::ClOutput> out;
  std::shared_ptr<server::ClClientMemory> memory;
  SharedCounters* counters = nullptr;
  EventWaiter* waiter = nullptr;  // used on the session's thread only
  // The session's callbacks not yet run: its end waits for them (a transfer counts as one).
  std::shared_ptr<std::atomic<int64_t>> outstanding;
};

// One transfer, checked: `bytes` at `offset` of buffer `mem`, from or to the client's `address`
// in `region` (opened for this transfer; dropped once the lanes are done with it).
struct DirectTransfer {
  cl_command_queue queue = nullptr;
  cl_context context = nullptr;  // the queue's (a write's user events)
  cl_mem mem = nullptr;
  uint64_t offset = 0, bytes = 0;
  std::vector<cl_event> wait;  // the command's wait list
  server::ClClientMemory::Region region;
  uint64_t address = 0;
  uint64_t call_id = 0;
  wire::ClId event = 0;  // the program's event (0: none)
};

// An operation that could not start (nothing is in flight): the CL error and what failed.
struct DirectFail {
  cl_int code;
  std::string what;
};

// Starts a read. Returns the native event that stands for the whole command (to be kept for the
// program's event when it named one; the caller releases it otherwise), or throws the error of
// its first piece's enqueue (nothing started then; the region is dropped). The read is answered,
// and its event reported, once its data is in the client's memory or it failed.
cl_event direct_read(const DirectSession& s, const DirectTransfer& t);
// Starts a write: answered once the lanes have fetched all of it. Returns the native event of
// the whole command (the caller reports its completion, as for any command); throws like
// direct_read. The host memory the device writes from lives until every piece is written.
cl_event direct_write(const DirectSession& s, const DirectTransfer& t);

// The piece size of a transfer of `bytes`: about kPieces pieces, each between the bounds, so
// that even a transfer of a few MiB overlaps its hops, and a large one is not cut too fine (each
// piece costs an enqueue and a completion).
inline constexpr uint64_t kMinPieceBytes = 1 << 20;
inline constexpr uint64_t kMaxPieceBytes = 32 << 20;
inline constexpr uint64_t kPieces = 8;
// A lane copies at least this much of a piece: smaller splits cost more than they overlap.
inline constexpr uint64_t kMinLaneCopyBytes = 1 << 20;
uint64_t piece_bytes(uint64_t bytes);

}  // namespace outboard::backends
