// What services (services/) and the shared call machinery (chunked.hpp, direct.hpp) use of the
// server core: sessions, sends, limits, the compute pool, completions and counters. The core
// (server.cpp) implements it; everything here but complete() runs on the progress thread.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/backend.hpp"
#include "server/compute_pool.hpp"
#include "server/config.hpp"
#include "server/session.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

namespace outboard::server {

class ChunkedCalls;  // chunked.hpp
class DirectPath;    // direct.hpp

// Finished work, handed from a compute thread back to the progress thread.
struct Completion {
  PeerId peer;
  wire::Message reply;
  std::shared_ptr<transport::Buffer> buffer;  // holds the reply's payload
  size_t offset = 0, bytes = 0;                // the payload within `buffer`; bytes 0: none
  // A service's call, counted when delivered (Core::count_call); empty for pings.
  std::string routine{};
  uint64_t call_id = 0;
  bool ok = true;
  std::string error{};  // why, when !ok
  bool held = true;     // `buffer` is counted in the session's held memory (released when sent)
  // Inputs the session keeps for later calls (ResidentStore::keep), copied on the compute thread.
  std::vector<KeptInput> keep_inputs{};
  // A result not sent because the client holds it already (wire::FftReply::output_unchanged).
  uint64_t result_bytes_not_sent = 0;
  // The payload goes as wire::ReplyChunks (call_id) over the session's lanes (Core::bulk_peer),
  // and the reply, which says so, without it.
  bool pieces_over_lanes = false;
  // The message (a ReplyChunk) goes on the session's next bulk connection (Core::bulk_peer), not
  // on its own; `sent(ok)` runs once it has gone, or with false when the session has ended.
  bool bulk = false;
  std::function<void(bool ok)> sent{};
  // Runs once the message is handed to the transport (OUTBOARD_CL_TRACE_CALLS); empty: nothing.
  std::function<void()> handed{};
};

class Core {
 public:
  virtual const Config& config() const = 0;
  virtual const std::vector<std::unique_ptr<Backend>>& backends() const = 0;
  virtual Session* session(PeerId peer) = 0;
  virtual transport::Worker& worker() = 0;
  virtual void send(PeerId peer, const wire::Message& m) = 0;
  // The connection for the session's next bulk send (a result piece): its lanes in turn, and its
  // own among them unless the lanes are on lane threads. Whatever else it sends goes to s.peer.
  virtual PeerId bulk_peer(Session& s) = 0;
  // Tells the peer why, then ends its session.
  virtual void reject(PeerId peer, const std::string& why) = 0;
  // Throws ProtocolError if a call needing `total` bytes of memory is over the limits.
  virtual void check_limits(const Session& s, uint64_t total) const = 0;
  // A call begins (its memory is being found): counted in flight until count_call. Throws
  // ProtocolError when its identity has identity_max_calls in flight already.
  virtual void admit_call(Session& s) = 0;
  virtual ComputePool& pool() = 0;
  // From any thread: the reply is sent (and its buffer's memory released) on the progress thread.
  virtual void complete(Completion c) = 0;
  // A call ended: the server's and the session's counters, and the log when it failed.
  virtual void count_call(Session* s, PeerId peer, uint64_t call_id, const std::string& routine, bool ok,
                          const std::string& error) = 0;
  virtual ChunkedCalls& chunked() = 0;
  virtual DirectPath& direct() = 0;
  // The inputs the session keeps between calls (made at the first use).
  virtual ResidentStore& resident(Session& s) = 0;

  // Throws ProtocolError unless a payload of `bytes` is what the message announced.
  static void check_payload(uint64_t announced, uint64_t bytes);
  // A whole call's payload (wire::layout order), then room for its outputs: `total` bytes of
  // `backend`'s kind, checked against the limits and held by the session; the arrival is noted.
  // Throws ProtocolError or std::bad_alloc. Runs inside the arrival (no sends).
  transport::Buffer receive_call(Session& s, uint64_t call_id, uint64_t total, Backend& backend);
  // The arrival receive_call noted (it is forgotten): {now, nullptr} when no payload came.
  Session::Arrival take_arrival(Session& s, uint64_t call_id, uint64_t now);
  // A whole call's memory: its payload as it arrived (`in_bytes`, then room for the outputs, in
  // all `total`), or, for a call whose inputs are empty (no payload arrived), memory for its
  // outputs, checked and held like receive_call's, of `from` (the backend's staging: a GPU's
  // copies from and into pageable memory run at a fraction of the page-locked rate) where it has
  // room, else of the heap. False: the session was rejected.
  bool whole_payload(Session& s, transport::Buffer& payload, uint64_t in_bytes, uint64_t total,
                     const transport::HostAllocator* from = nullptr);

 protected:
  ~Core() = default;
};

}  // namespace outboard::server
