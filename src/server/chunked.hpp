// Calls whose input arrives in chunks and whose result leaves in pieces (pipeline.hpp), for every
// service: the service sets a call up (its staging memory, its Pipeline, its result pieces, how
// its reply is built); the core moves the bytes, chunk messages in and ReplyChunks out, or over
// the copy lanes on the direct path (direct.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/core.hpp"
#include "server/pipeline.hpp"
#include "server/resident_fill.hpp"
#include "transport/buffer.hpp"
#include "wire/messages.hpp"

namespace outboard::server {

struct DirectCopies;  // direct.hpp

// How a chunked call ended, for the reply its service builds.
struct CallOutcome {
  bool ok = false;
  std::string error;  // why, when !ok
  int64_t info = 0;   // the pipeline's (LAPACK's INFO)
  uint64_t setup_ns = 0;    // finding staging memory, part of receive_ns
  uint64_t receive_ns = 0, to_device_ns = 0, compute_ns = 0, from_device_ns = 0;
};

struct ChunkedCall {
  ChunkedCall();
  ~ChunkedCall();
  PeerId peer = 0;
  uint64_t call_id = 0;
  std::vector<std::byte> shape_bytes;  // the first chunk's encoding with index 0: every chunk must match
  uint64_t payload_bytes = 0, chunk_bytes = 0;

  // Set by the service's set-up, `answer` first (a direct call whose set-up fails is answered
  // with it), then ChunkedCalls::stage, then the rest.
  std::function<wire::Message(const CallOutcome&)> answer;  // the final reply; may record what the call measured
  std::string name;                                         // the routine, for counters and logs
  uint64_t staging_bytes = 0;
  transport::Buffer staging;  // declared before `pipe`: the pipeline goes first
  std::unique_ptr<Pipeline> pipe;
  // Resident inputs (wire::ResidentInput): those in use fill their chunks from the session's
  // store (held_chunks, never sent), those sent are kept once the call ran (ChunkedCalls::finish).
  std::vector<wire::ResidentInput> resident;
  std::vector<uint64_t> input_bytes;     // of each input, in order from the payload's start
  std::unique_ptr<ResidentFill> fill;    // after `staging`: waited for before it is freed
  std::vector<uint64_t> held;            // the chunks it fills, told to the pipeline once it is done
  uint64_t held_bytes = 0;
  std::vector<ResultPiece> pieces;

  // Progress, kept by the core.
  std::vector<uint8_t> chunk_state;  // 0 not announced, 1 landing, 2 arrived
  uint64_t arrived = 0, prefix_chunks = 0;
  size_t pieces_done = 0;
  uint64_t sends_in_flight = 0;
  std::string error;                   // set when the call failed
  uint64_t first_ns = 0, last_ns = 0;  // first chunk announced, last chunk landed
  uint64_t setup_ns = 0;               // finding staging memory
  std::unique_ptr<DirectCopies> direct;  // set on the direct path
};

class ChunkedCalls {
 public:
  using SetUp = std::function<void(ChunkedCall&)>;  // throws ProtocolError (limits) or std::bad_alloc
  static constexpr size_t kMaxPerSession = 64;

  explicit ChunkedCalls(Core& core) : core_(core) {}

  // Where a chunk (wire::CallChunk, wire::LapackChunk, ...) lands: in its call's staging buffer,
  // the call being set up by whichever of its chunks comes first. Throws ProtocolError when the
  // chunk does not match its call or the call is over the limits. Runs inside the arrival.
  // A chunk with resident inputs (CallChunk, LapackChunk: decoding checked them) has its call fill
  // the chunks they hold, or fail with wire::kResidentMissing where the store lacks one.
  template <class Chunk>
  transport::Landing landing(Session& s, const Chunk& chunk, uint64_t bytes, const SetUp& set_up) {
    if (bytes != wire::chunk_length(chunk)) throw ProtocolError("chunk size does not match its call");
    Chunk shape = chunk;
    shape.chunk_index = 0;
    return land(s, chunk.call_id, chunk.chunk_index, wire::encode(shape), chunk.payload_bytes, chunk.chunk_bytes,
                wire::chunk_offset(chunk), bytes, [&](ChunkedCall& cc) {
                  set_up(cc);
                  if constexpr (requires { chunk.resident; }) {
                    if (chunk.resident.empty()) return;
                    cc.resident = chunk.resident;
                    cc.input_bytes = wire::input_bytes(chunk.call);
                    hold_inputs(s, cc);
                  }
                });
  }
  // The chunk message whose payload landed.
  void on_chunk(Session& s, uint64_t call_id, uint64_t index);

  // A call of `payload_bytes` in chunks of `chunk_bytes`, not yet set up.
  std::shared_ptr<ChunkedCall> create(Session& s, uint64_t call_id, uint64_t payload_bytes, uint64_t chunk_bytes);
  // The call is in progress: its memory counts against the session.
  void admit(Session& s, const std::shared_ptr<ChunkedCall>& cc);

  // For set-ups: `bytes` of staging memory of `backend`'s kind, checked against the limits.
  void stage(Session& s, ChunkedCall& cc, uint64_t bytes, const Backend& backend);
  // The pipeline `make` returns, or nullptr (then the service runs the call on the compute pool)
  // when it declines or fails (logged).
  static std::unique_ptr<Pipeline> offered(const Backend& backend,
                                           const std::function<std::unique_ptr<Pipeline>()>& make);
  // What pool pipelines call when a step ends.
  std::function<void()> wake();

  // Chunk `index` of the call's input is in its staging buffer.
  void chunk_arrived(Session& s, ChunkedCall& cc, uint64_t index);
  void fail(ChunkedCall& cc, const std::string& why);
  // Sends finished pieces of results and, once everything is out, the reply. Returns whether any
  // call still needs its device polled.
  bool progress(std::unordered_map<PeerId, Session>& sessions);
  // The session is going: its calls finish with it.
  void session_ended(const Session& s) { active_ -= s.chunked.size(); }

  size_t active() const { return active_; }
  uint64_t pipelined_calls() const { return pipelined_calls_; }

 private:
  transport::Landing land(Session& s, uint64_t call_id, uint64_t index, std::vector<std::byte> shape_bytes,
                          uint64_t payload_bytes, uint64_t chunk_bytes, uint64_t offset, uint64_t bytes,
                          const SetUp& set_up);
  void send_piece(Session& s, const std::shared_ptr<ChunkedCall>& call, size_t index);
  // The call's held chunks: copied from the session's store (a ResidentFill), or, where it lacks
  // an input, the call failed and they count as arrived.
  void hold_inputs(Session& s, ChunkedCall& cc);
  // The inputs the call sent to be kept, as parts of its staging memory (once it ran).
  void keep_inputs(Session& s, ChunkedCall& cc);
  void finish(Session& s, ChunkedCall& cc);

  Core& core_;
  size_t active_ = 0;
  uint64_t pipelined_calls_ = 0;
};

}  // namespace outboard::server
