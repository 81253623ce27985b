// The message schema shared by client and server. Every message starts with a fixed header
// (magic, protocol version, type); bodies are encoded with wire::Writer and decoded with the
// bounds-checked wire::Reader. A message's bulk payload (matrices) travels beside it, not in it.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "common/secret.hpp"
#include "wire/fft.hpp"
#include "wire/resident.hpp"
#include "wire/lapack.hpp"
#include "wire/load.hpp"
#include "wire/opencl.hpp"
#include "wire/level3.hpp"

namespace outboard::wire {

inline constexpr uint32_t kMagic = 0x4452424f;  // "OBRD"
// 2: answers carry the server's load; 3: encryption negotiated; 4: AuthResult names sibling
// workers, Hold; 5: LAPACK calls carry range, diag, itype, eigenvalue bounds, rcond (issue 35);
// 6: and side, k (orgqr, ormqr); syev/heev (routine 29) came without a new field. 7: and balanc,
// sense, tranb, isgn, ilo, ihi (gehrd, orghr, trsyl, geevx; routines 30-39). A server without a
// routine rejects its id in validate() (the client then runs the call locally). 8: resident
// inputs. 9: lanes (AuthResult.lanes, JoinSession, SessionJoined). 10: Enveloped. 11: OpenCL's
// ClSetSpecConstant. 12: FftExecute.output_digest, FftReply.output_unchanged. 13: AuthResult.lane_ports.
// 14: OpenCL data over the lanes (ClChunk; ClRequest.lane_transfer, lane_bytes, reply_over_lanes; ClReply.lane_bytes).
// 15: CallChunk.resident, LapackChunk.resident.
inline constexpr uint16_t kProtocolVersion = 15;
inline constexpr size_t kMaxText = 4096;  // longest string field
inline constexpr size_t kMaxIdentity = 64;  // longest identity name

enum class Type : uint16_t {
  hello = 1,        // client -> server: opens authentication
  challenge = 2,    // server -> client: server's nonce and proof
  auth = 3,         // client -> server: client's proof
  auth_result = 4,  // server -> client: accepted or refused
  blas3_call = 5,   // client -> server: a Level-3 BLAS call; payload = packed input matrices
  call_reply = 6,   // server -> client: result of a call; payload = packed output matrix
  status_request = 7,
  status_reply = 8,
  error = 9,        // either way: the connection is about to be closed, and why
  ping = 10,        // client -> server: a payload (if any) for benchmarks
  pong = 11,        // server -> client: answer to a ping, with the payload back if asked
  lapack_call = 12,   // client -> server: a LAPACK call; payload = packed input arrays (wire/lapack.hpp)
  call_chunk = 13,    // client -> server: one piece of a large Level-3 call's input (pipelined path)
  reply_chunk = 14,   // server -> client: one piece of a pipelined call's result
  lapack_reply = 15,  // server -> client: result of a LAPACK call: INFO; payload = packed output arrays
  lapack_chunk = 16,  // client -> server: one piece of a large LAPACK call's input (pipelined path)
  lanes_request = 17, // client -> server: copy to and from my memory one-sidedly (direct path)
  lanes_reply = 18,   // server -> client: how many copy lanes serve this session (0: none, and why)
  direct_lapack = 19, // client -> server: a LAPACK call whose arrays the server copies itself
  proceed = 20,       // client -> server: a gated direct call may now write its outputs
  input_taken = 21,   // server -> client: a gated direct call's input is all copied
  sink_request = 22,  // client -> server: open a sink for streamed pings (transport::Worker::open_sink)
  sink_reply = 23,    // server -> client: the sink's id (0: none, and why)
  fft_plan = 24,      // client -> server: make this plan ready (wire/fft.hpp); no answer
  fft_release = 25,   // client -> server: the plan is destroyed; no answer
  fft_execute = 26,   // client -> server: run a plan; payload = dense input
  fft_chunk = 27,     // client -> server: one piece of a large execution's input
  fft_reply = 28,     // server -> client: result of an execution; payload = dense output
  direct_fft = 29,    // client -> server: an FFT execution whose arrays the server copies itself
  direct_blas3 = 30,  // client -> server: a Level-3 BLAS call whose matrices the server copies itself
  cl_request = 31,    // client -> server: an OpenCL operation (wire/opencl.hpp); payload = its data
  cl_reply = 32,      // server -> client: the answer to an answered OpenCL operation; payload = its data
  cl_notice = 33,     // server -> client: an event's status, or a failure nobody waits for
  hold = 34,          // server -> client during the handshake: alive, busy with others: keep waiting
  join_session = 35,  // client -> server, first on a new connection: add it to a session as a lane
  session_joined = 36, // server -> client on that connection: joined, or why not
  enveloped = 37,     // client -> server: a message whose encoding is too long for a header; payload = it, then its payload
  cl_chunk = 38,      // client -> server, usually on a lane: one piece of an OpenCL operation's data
};

struct Hello {
  Nonce client_nonce{};
  std::string client_name;  // host:pid:program, for status and logs
  std::string identity;     // whose secret the client proves knowing (empty: "default")
  bool encrypt = false;     // the client insists on an encrypted session (OUTBOARD_ENCRYPT=1)
};
struct Challenge {
  Nonce server_nonce{};
  Mac server_proof{};  // MAC(secret, "server" | client_nonce | server_nonce)
  std::string server_name;
  bool encrypt = false;  // the server encrypts its sessions (encrypt = true): it insists
};
struct Auth {
  Mac client_proof{};  // MAC(secret, "client" | server_nonce | client_nonce)
};
struct AuthResult {
  bool accepted = false;
  std::string message;
  ServerLoad load;
  // Accepted and encrypted: every later message either way is sealed (transport::Worker::protect)
  // with keys derived from the handshake (seal_keys in common/secret.hpp).
  bool encrypted = false;
  // The ports of the other server processes of this host's server (a worker per GPU,
  // tools/outboard/serve_restarts.hpp), at the address the client reached this one: it may spread
  // its calls over them, and move to them while this one is restarting.
  std::vector<uint16_t> siblings;
  // Bytes of inputs the server keeps for this session between calls (ResidentInput); 0: none.
  uint64_t resident_bytes = 0;
  // Connections the session may have in all, this one included (lanes: JoinSession); 1: this one.
  uint32_t lanes = 1;
  // Where lanes connect (the server's lane threads, each with a port of its own, at the address
  // the client reached this one): lane n to lane_ports[(n - 1) % size]. Empty: to this port.
  std::vector<uint16_t> lane_ports;
};
inline constexpr uint32_t kMaxLanes = 64;
// Lanes: further connections of a ready session that carry its bulk data in parallel (one TCP
// connection moves less than a fast link: one core's worth). Sent first on a new connection
// instead of a Hello; no other message is taken before the answer. The proof shows the client
// knows the session's secret and nonces, so only the session's own client can add lanes to it;
// each lane number joins once, so a join seen on the wire cannot be replayed.
struct JoinSession {
  Nonce server_nonce{};  // names the session: the nonce its server's challenge carried
  uint32_t lane = 0;     // 1 .. AuthResult::lanes - 1
  Mac proof{};           // lane_proof(secret, server_nonce, client_nonce, lane)
};
struct SessionJoined {
  bool ok = false;
  std::string message;  // why not, when !ok (the connection is then closed)
};
// A message's encoding travels as the transport's header, which UCX bounds (~8 KB: a longer one
// aborted the program inside UCX, OpenCL-CTS test_compiler multiple_embedded_headers). Longer
// ones (a build's options and header names, large kernel arguments) travel Enveloped: the
// encoding first in the payload, then the message's own payload. Client to server, once ready;
// never nested.
inline constexpr size_t kMaxHeaderBytes = 4096;
inline constexpr uint64_t kMaxEnvelopedHeader = uint64_t(1) << 20;
struct Enveloped {
  uint64_t header_bytes = 0;   // the message's encoding: more than kMaxHeaderBytes, at most kMaxEnvelopedHeader
  uint64_t payload_bytes = 0;  // its payload, after it
};
inline constexpr size_t kMaxSiblings = 64;
// The byte sizes of a Level-3 call's inputs, and which of them its output shares (-1: none).
std::vector<uint64_t> input_bytes(const Level3Call& c);
std::vector<uint64_t> input_bytes(const LapackCall& c);  // its outputs share none
int shared_input(const Level3Call& c);
struct Blas3Call {
  uint64_t call_id = 0;
  Level3Call call;
  uint64_t payload_bytes = 0;  // request_bytes(call), less the resident inputs in use
  std::vector<ResidentInput> resident;
};
struct CallReply {
  uint64_t call_id = 0;
  bool ok = false;
  std::string message;  // why it failed, when !ok
  uint64_t payload_bytes = 0;
  // Where the server's time went, for reports and phase plots: from the request's first byte to
  // its last, then waiting for a compute thread, then copying to a device, computing, and copying
  // back (the device copies are zero on a host backend).
  uint64_t receive_ns = 0;
  uint64_t queue_ns = 0;
  uint64_t to_device_ns = 0;
  uint64_t compute_ns = 0;
  uint64_t from_device_ns = 0;
  ServerLoad load;  // the server's, as the reply left
};
struct LapackRequest {
  uint64_t call_id = 0;
  LapackCall call;
  uint64_t payload_bytes = 0;  // request_bytes(call), less the resident inputs in use
  std::vector<ResidentInput> resident;
};
struct LapackReply {
  uint64_t call_id = 0;
  bool ok = false;
  std::string message;  // why it failed, when !ok
  int64_t info = 0;     // LAPACK's INFO, when ok
  uint64_t payload_bytes = 0;  // reply_bytes(call) when ok, else 0
  // As CallReply's.
  uint64_t receive_ns = 0;
  uint64_t queue_ns = 0;
  uint64_t to_device_ns = 0;
  uint64_t compute_ns = 0;
  uint64_t from_device_ns = 0;
  ServerLoad load;
};
struct StatusRequest {
  uint64_t call_id = 0;
};
struct StatusReply {
  uint64_t call_id = 0;
  std::string json;
};
struct ErrorMessage {
  std::string message;
};
// Sent by a server while a connection's handshake waits its turn (at once when the connection
// arrives, then about every second): a client that hears it keeps waiting rather than give up at
// its connect timeout, which then counts only the server's silence.
struct Hold {
  uint32_t handshakes_waiting = 0;  // handshakes the server has under way (a hint, for the log)
};

struct Ping {
  enum Flags : uint8_t {
    echo = 1,     // send the payload back (ping-pong); otherwise it is discarded (streaming)
    via_gpu = 2,  // copy the payload into the server's GPU memory (and back, with echo)
    no_reply = 4, // streaming: no answer (a later ping with a reply acknowledges it); not with the others
    fill = 8,     // carries nothing: answered with payload_bytes of the server's (bench get); alone
  };
  uint64_t call_id = 0;
  uint64_t payload_bytes = 0;
  uint8_t flags = 0;
};
struct Pong {
  uint64_t call_id = 0;
  uint64_t payload_bytes = 0;  // echoed bytes
  uint64_t gpu_ns = 0;         // time the server spent copying to and from its GPU
  ServerLoad load;
};

// A large call travels in chunks so the server can start copying (and computing) before all of
// its input has arrived. Every chunk repeats the whole call: chunks may arrive in any order, and
// whichever comes first sets the call up. Chunk i holds payload bytes [i * chunk_bytes, ...),
// chunk_bytes each but the last. The server answers with ReplyChunks of the result, then a
// CallReply without payload. Inputs the server holds (`resident`, in use) are not sent: the
// chunks that lie wholly inside them (held_chunks) are filled from the server's store.
struct CallChunk {
  uint64_t call_id = 0;
  Level3Call call;
  uint64_t payload_bytes = 0;  // of the whole call: must equal request_bytes(call)
  uint64_t chunk_bytes = 0;    // at least kMinChunkBytes
  uint64_t chunk_index = 0;    // below chunk_count(payload_bytes, chunk_bytes); never a held chunk
  std::vector<ResidentInput> resident;
};
// The same for a LAPACK call: its result comes back in ReplyChunks (none spanning two output
// arrays), then a LapackReply without payload.
struct LapackChunk {
  uint64_t call_id = 0;
  LapackCall call;
  uint64_t payload_bytes = 0;  // of the whole call: must equal request_bytes(call)
  uint64_t chunk_bytes = 0;    // at least kMinChunkBytes
  uint64_t chunk_index = 0;    // below chunk_count(payload_bytes, chunk_bytes); never a held chunk
  std::vector<ResidentInput> resident;
};
struct ReplyChunk {
  uint64_t call_id = 0;
  uint64_t offset = 0;  // where this piece goes in the packed result
  uint64_t bytes = 0;   // its payload
};
inline constexpr uint64_t kMinChunkBytes = 64 * 1024;  // bounds the chunks of a call (and a peer's work)
inline uint64_t chunk_count(uint64_t total, uint64_t chunk_bytes) { return (total + chunk_bytes - 1) / chunk_bytes; }
template <class Chunk>  // CallChunk or LapackChunk
uint64_t chunk_offset(const Chunk& c) {
  return c.chunk_index * c.chunk_bytes;
}
template <class Chunk>
uint64_t chunk_length(const Chunk& c) {
  return std::min(c.chunk_bytes, c.payload_bytes - chunk_offset(c));
}

// The direct path: the server copies a call's arrays out of and into the client's memory itself
// (transport::CopyLanes), in parallel, while the client only waits. LanesRequest gives the
// server the client's transport address once per connection; LanesReply says whether the server
// serves the direct path (lanes > 0) or why not.
inline constexpr size_t kMaxAddressBytes = 16384;  // a UCX worker address
inline constexpr size_t kMaxKeyBytes = 4096;       // a packed UCX remote key
inline constexpr size_t kMaxDirectKeys = 16;
inline constexpr size_t kMaxExtents = 64;
struct LanesRequest {
  uint64_t call_id = 0;
  std::vector<std::byte> worker_address;  // 1 .. kMaxAddressBytes
  // Same-host copies (CMA): the client's process id, and where in its memory it holds the
  // handshake's server nonce, which the server reads to check that the pid is the client's.
  uint32_t pid = 0;
  uint64_t probe_address = 0;
};
struct LanesReply {
  uint64_t call_id = 0;
  uint32_t lanes = 0;
  std::string message;  // why none, when lanes == 0
};
// A run of the client's memory: `bytes` at `address`, reachable with keys[key].
struct Extent {
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint32_t key = 0;
  bool operator==(const Extent&) const = default;
};
// A LAPACK call on the direct path. Its packed input (wire/lapack.hpp's layout) is the
// concatenation of `input`'s extents, its packed result that of `output`'s. The server answers
// with a LapackReply without payload once the outputs are written. `gated`: the outputs overwrite
// inputs in place, and the client first keeps their values (for a local rerun should the call
// fail): the server writes no output before the client's Proceed.
struct DirectLapack {
  uint64_t call_id = 0;
  LapackCall call;
  std::vector<std::vector<std::byte>> keys;  // 1 .. kMaxDirectKeys, each 1 .. kMaxKeyBytes
  std::vector<Extent> input, output;         // each 1 .. kMaxExtents, summing to the call's sizes
  bool gated = false;
};
// An FFT execution on the direct path (wire/fft.hpp): its dense input is the concatenation of
// `input`'s extents, its dense output goes to `output`'s; answered with an FftReply without
// payload once the output is written. Never gated: the client lands a result that would overwrite
// the input (an in-place transform) aside, so a local rerun still has the input.
struct DirectFft {
  uint64_t call_id = 0;
  uint64_t plan_id = 0;
  FftShape shape;                            // the plan's
  std::vector<std::vector<std::byte>> keys;  // 1 .. kMaxDirectKeys, each 1 .. kMaxKeyBytes
  std::vector<Extent> input, output;         // each 1 .. kMaxExtents, summing to the shape's sizes
  static constexpr bool gated = false;
};
// A Level-3 BLAS call on the direct path: its packed input (wire::layout order, as a CallChunk's
// payload) is the concatenation of `input`'s extents, its packed result goes to `output`'s;
// answered with a CallReply without payload once the result is written. Gated when the result
// overwrites an input in the client's memory (C with beta != 0, trmm/trsm's B): see Proceed.
struct DirectBlas3 {
  uint64_t call_id = 0;
  Level3Call call;
  std::vector<std::vector<std::byte>> keys;  // 1 .. kMaxDirectKeys, each 1 .. kMaxKeyBytes
  std::vector<Extent> input, output;         // each 1 .. kMaxExtents, summing to the call's sizes
  bool gated = false;
};
struct Proceed {
  uint64_t call_id = 0;  // the gated call's
};
// Sent for a gated call once its input is copied: the client keeps the in-place arrays' values
// then (while the server computes) rather than during the copies, which would share the memory
// bandwidth.
struct InputTaken {
  uint64_t call_id = 0;
};

// Streaming without a header per message: the server opens a transport sink for the session
// (payloads counted as unanswered pings and dropped), so the client can send its stream there.
// A payload above max_bytes ends the session, as an over-large ping would.
struct SinkRequest {
  uint64_t call_id = 0;
};
struct SinkReply {
  uint64_t call_id = 0;
  uint32_t sink = 0;       // 0: none
  uint64_t max_bytes = 0;  // the largest payload the sink takes
  std::string message;     // why none, when sink == 0
};

// The alternatives; type_of() in messages.cpp maps each to its Type.
using Message = std::variant<Hello, Challenge, Auth, AuthResult, Blas3Call, CallReply, StatusRequest, StatusReply,
                             ErrorMessage, Ping, Pong, LapackRequest, LapackReply, CallChunk, ReplyChunk, LapackChunk,
                             LanesRequest, LanesReply, DirectLapack, Proceed, InputTaken, SinkRequest, SinkReply,
                             FftPlan, FftRelease, FftExecute, FftChunk, FftReply, DirectFft, DirectBlas3,
                             ClRequest, ClReply, ClNotice, Hold, JoinSession, SessionJoined, Enveloped, ClChunk>;
// The Type of a message (its variant alternative).
Type type_of(const Message& m);

std::vector<std::byte> encode(const Message& m);
// A Ping's encoding (the same bytes as encode()) into fixed storage, without allocation: streaming
// sends one per message.
inline constexpr size_t kPingBytes = 25;
void encode_ping(const Ping& p, std::span<std::byte, kPingBytes> out);
// True, with `out` set, when `bytes` is exactly one well-formed Ping (what decode() would accept
// as one); false for anything else, which decode() then handles or explains. The streaming fast
// path: no variant, no exception.
bool decode_ping(std::span<const std::byte> bytes, Ping& out);
// Throws ProtocolError on anything but one exactly well-formed message (wrong magic or version,
// unknown type, truncation, trailing bytes, over-long strings, invalid BLAS or LAPACK call).
Message decode(std::span<const std::byte> bytes);

// Byte strings the MACs cover.
Mac server_proof(const Secret& s, const Nonce& client_nonce, const Nonce& server_nonce);
Mac client_proof(const Secret& s, const Nonce& server_nonce, const Nonce& client_nonce);
Mac lane_proof(const Secret& s, const Nonce& server_nonce, const Nonce& client_nonce, uint32_t lane);

// Longest status document: JSON may be long, but not unbounded.
inline constexpr size_t kMaxStatusJson = 1 << 20;

}  // namespace outboard::wire
