#include "server/server.hpp"

#include <spdlog/spdlog.h>
#include <sched.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "server/compute_pool.hpp"
#include "server/cost_model.hpp"
#include "server/lapack_pipeline.hpp"
#include "server/pipeline.hpp"
#include "server/pool_pipeline.hpp"
#include "server/services/blas3_executor.hpp"
#include "server/services/lapack_executor.hpp"
#include "server/spread_pipeline.hpp"
#include "transport/copy_lanes.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

namespace outboard::server {
namespace {

using transport::Buffer;
using transport::CopyLanes;
using transport::PeerId;

enum class State { awaiting_hello, awaiting_auth, ready, closing };

// A spin-wait hint, `times` over: the core idles briefly (~40 ns each on x86) without a system call.
void pause_core(int times) {
  for (int i = 0; i < times; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

// A call on the direct path: the server copies the input out of the client's memory in chunks
// and the result pieces into it, over the copy lanes (transport/copy_lanes.hpp).
struct DirectCopies {
  CopyLanes::Remote remote = 0;
  std::vector<CopyLanes::Key> keys;  // by wire::Extent::key
  std::vector<wire::Extent> input, output;
  std::vector<uint32_t> copies_left;  // per chunk: copies not yet complete
  bool gated = false, proceeded = false;
  std::vector<size_t> held;  // finished pieces waiting for the client's Proceed
};

// A call whose input arrives in chunks and whose result leaves in pieces (pipeline.hpp, and
// lapack_pipeline.hpp for LAPACK calls).
struct ChunkedCall {
  PeerId peer = 0;
  uint64_t call_id = 0;
  std::string name;                    // the routine, for counters and logs
  std::vector<std::byte> shape_bytes;  // the first chunk's encoding with index 0: every chunk must match
  uint64_t payload_bytes = 0, chunk_bytes = 0, staging_bytes = 0;
  std::optional<wire::Level3Call> level3;  // BLAS calls, for the cost model
  bool lapack = false;                     // answered with a LapackReply
  std::vector<ResultPiece> pieces;
  Backend* backend = nullptr;
  Buffer staging;                // declared before `pipe`: the pipeline goes first
  std::unique_ptr<Pipeline> pipe;
  std::vector<uint8_t> chunk_state;  // 0 not announced, 1 landing, 2 arrived
  uint64_t arrived = 0, prefix_chunks = 0;
  size_t pieces_done = 0;
  uint64_t sends_in_flight = 0;
  std::string error;             // set when the call failed
  uint64_t first_ns = 0, last_ns = 0;  // first chunk announced, last chunk landed
  uint64_t setup_ns = 0;               // finding staging memory
  std::unique_ptr<DirectCopies> direct;  // set on the direct path
};

struct Session {
  PeerId peer;
  std::string addr;
  std::string client_name;
  State state = State::awaiting_hello;
  Nonce client_nonce{}, server_nonce{};
  uint64_t connected_ns = now_ns();
  uint64_t calls = 0, errors = 0, bytes_in = 0, bytes_out = 0;
  uint64_t pings = 0, ping_bytes = 0;  // benchmark traffic received
  uint64_t held_bytes = 0;     // payload memory of calls in progress
  std::string refusal;         // why the last payload was refused
  std::string sink_refusal;    // why a payload sent to the session's sink was refused: ends the session
  uint64_t close_at_ns = 0;    // closing: when to hang up
  // Calls whose payload is arriving: when it began (receiving includes finding memory for it),
  // and the backend chosen for it then (its staging memory is that backend's).
  struct Arrival {
    uint64_t ns = 0;
    Backend* backend = nullptr;
  };
  std::unordered_map<uint64_t, Arrival> arrivals;  // by call id
  std::unordered_map<uint64_t, std::shared_ptr<ChunkedCall>> chunked;  // call id -> chunked call in progress
  std::optional<CopyLanes::Remote> remote;  // the client's memory, once it asked for the direct path
};

// A direct-path copy that ended, handed from a copy lane's thread to the progress thread.
struct CopyDone {
  std::shared_ptr<ChunkedCall> call;
  bool put = false;
  uint64_t index = 0;  // get: the chunk
  bool ok = false;
};

// Finished work, handed from a compute thread back to the progress thread.
struct Completion {
  PeerId peer;
  wire::Message reply;             // CallReply or Pong
  std::shared_ptr<Buffer> buffer;  // holds the reply's payload
  size_t offset = 0, bytes = 0;    // the payload within `buffer`; bytes 0: none
  std::string routine;             // BLAS and LAPACK calls (for the counters); empty for pings
};

}  // namespace

struct Server::Impl {
  Config config;
  std::vector<std::unique_ptr<Backend>> backends;
  Backend* level3_backend = nullptr;  // the first host backend that serves Level-3 BLAS
  Backend* level3_device = nullptr;   // the first device backend that does, for large calls
  Backend* device_backend = nullptr;  // the first with device memory, if any
  std::unique_ptr<CostModel> costs;   // where calls run, and how pipelined calls are blocked
  std::vector<Blas3Executor*> level3_devices;  // every device backend's: big calls spread over them
  Backend* lapack_backend = nullptr;  // the first host backend that serves LAPACK
  Backend* lapack_device = nullptr;   // the first device backend that does, for large calls
  Secret secret{};
  std::string server_name;
  uint64_t started_ns = now_ns();
  std::atomic<bool> stopping{false};
  std::unique_ptr<transport::Worker> worker;
  std::unique_ptr<ComputePool> pool;
  std::unordered_map<PeerId, Session> sessions;
  std::map<std::string, uint64_t> calls_by_routine;
  uint64_t total_calls = 0, pipelined_calls = 0, total_errors = 0, total_connections = 0, refused_auth = 0,
           total_pings = 0;
  std::mutex done_mu;  // guards `done`: filled by compute threads
  std::vector<Completion> done;
  std::atomic<bool> any_done{false};  // `done` is not empty
  std::unique_ptr<CopyLanes> lanes;   // the direct path's; null when off
  std::string lanes_unavailable;      // why, when null
  std::mutex copies_mu;               // guards `copies_done`: filled by copy lanes
  std::vector<CopyDone> copies_done;
  std::atomic<bool> any_copies{false};
  uint64_t direct_calls = 0;
  uint16_t port = 0;

  Session* session(PeerId p) {
    auto it = sessions.find(p);
    return it == sessions.end() ? nullptr : &it->second;
  }

  void send(PeerId peer, const wire::Message& m) { worker->send(peer, wire::encode(m), {}, nullptr); }

  // Tells the peer why, then closes the connection once the message is out.
  void reject(PeerId peer, const std::string& why) {
    Session* s = session(peer);
    if (!s || s->state == State::closing) return;
    spdlog::warn("session.reject peer={} addr={} client=\"{}\" reason=\"{}\"", peer, s->addr, s->client_name, why);
    send(peer, wire::ErrorMessage{why});
    close_soon(*s);
  }

  // Hangs up a little later: closing right away races the last message, which the peer might
  // then never see. A polite peer hangs up first.
  void close_soon(Session& s) {
    s.state = State::closing;
    s.close_at_ns = now_ns() + kCloseGraceNs;
  }
  static constexpr uint64_t kCloseGraceNs = 1'000'000'000;

  // A graceful close, so the last message still reaches the peer.
  void close(PeerId peer) {
    if (!sessions.count(peer)) return;
    worker->close(peer, false);
    end_session(peer, "closed by server");
  }

  void end_session(PeerId peer, const std::string& why) {
    auto it = sessions.find(peer);
    if (it == sessions.end()) return;
    const Session& s = it->second;
    chunked_active -= s.chunked.size();  // their pipelines finish with the session
    if (s.remote && lanes) lanes->detach(*s.remote);  // copies still queued fail
    spdlog::info("session.end peer={} addr={} client=\"{}\" calls={} bytes_in={} bytes_out={} reason=\"{}\"", peer,
                 s.addr, s.client_name, s.calls, s.bytes_in, s.bytes_out, why);
    sessions.erase(it);
  }

  void on_connect(PeerId peer, const std::string& addr) {
    ++total_connections;
    Session& s = sessions[peer];
    s.peer = peer;
    s.addr = addr;
    spdlog::info("session.start peer={} addr={}", peer, addr);
    if (sessions.size() > config.max_clients) reject(peer, "server is serving its maximum number of clients");
  }

  void count_ping(Session& s, uint64_t bytes) {
    ++s.pings;
    s.ping_bytes += bytes;
    ++total_pings;
  }

  // Decides where a call's matrices land: checked against the session's state and limits
  // before a single byte is pulled. Runs inside the arrival (no sends from here).
  transport::Landing on_payload(PeerId peer, std::span<const std::byte> header, uint64_t bytes) {
    Session* s = session(peer);
    if (!s) return transport::Landing::refuse();
    try {
      // Streaming pings take the fast path: a fixed-size decode, no variant; anything else (a
      // malformed ping too) the full decoder, which says what is wrong.
      wire::Ping fast;
      std::optional<wire::Message> m;
      const wire::Ping* ping = &fast;
      if (!wire::decode_ping(header, fast)) {
        m = wire::decode(header);
        ping = std::get_if<wire::Ping>(&*m);
      }
      if (s->state != State::ready) throw ProtocolError("not authenticated");
      if (ping) {
        if (ping->payload_bytes != bytes) throw ProtocolError("ping payload does not match its announced size");
        check_limits(*s, bytes);
        if (ping->flags == wire::Ping::no_reply) {  // streaming: checked, counted, and nothing more to do
          count_ping(*s, bytes);
          return transport::Landing::discard();
        }
        const bool to_device = (ping->flags & wire::Ping::via_gpu) && device_backend;
        return transport::Landing::receive(Buffer::allocate(bytes, to_device ? device_backend->staging() : nullptr));
      }
      if (auto* chunk = std::get_if<wire::CallChunk>(&*m)) return chunk_landing(*s, *chunk, bytes);
      if (auto* chunk = std::get_if<wire::LapackChunk>(&*m)) return chunk_landing(*s, *chunk, bytes);
      if (auto* lq = std::get_if<wire::LapackRequest>(&*m)) return lapack_payload(*s, *lq, bytes);
      auto* call = std::get_if<wire::Blas3Call>(&*m);
      if (!call) throw ProtocolError("this message carries no payload");
      if (call->payload_bytes != bytes)
        throw ProtocolError("payload of " + std::to_string(bytes) + " bytes does not match the announced " +
                            std::to_string(call->payload_bytes));
      uint64_t total = bytes + extra_output_bytes(call->call);
      check_limits(*s, total);
      Session::Arrival& a = s->arrivals[call->call_id];
      a = {now_ns(), backend_for(call->call)};
      Buffer b = Buffer::allocate(total, a.backend->staging());
      s->held_bytes += total;
      return transport::Landing::receive(std::move(b));
    } catch (const std::bad_alloc&) {
      s->refusal = "server is out of memory for a call of " + std::to_string(bytes) + " bytes";
    } catch (const std::exception& e) {
      s->refusal = e.what();
    }
    return transport::Landing::refuse();
  }

  // A payload in a session's sink: an unanswered ping, checked and counted like one. Refused, it
  // ends the session at its next message (the client's stream ends with an acknowledged ping).
  bool on_sink(PeerId peer, uint64_t bytes) {
    Session* s = session(peer);
    if (!s || s->state != State::ready || !s->sink_refusal.empty()) return false;
    try {
      check_limits(*s, bytes);
    } catch (const std::exception& e) {
      s->sink_refusal = e.what();
      return false;
    }
    count_ping(*s, bytes);
    return true;
  }

  void on_sink_request(Session& s, const wire::SinkRequest& q) {
    try {
      send(s.peer, wire::SinkReply{q.call_id, worker->open_sink(s.peer), config.max_request_bytes, ""});
    } catch (const Error& e) {
      send(s.peer, wire::SinkReply{q.call_id, 0, 0, e.what()});
    }
  }

  // A LAPACK call's memory: its inputs as they arrive, then room for its outputs.
  std::optional<Buffer> lapack_payload(Session& s, const wire::LapackRequest& q, uint64_t bytes) {
    if (q.payload_bytes != bytes)
      throw ProtocolError("payload of " + std::to_string(bytes) + " bytes does not match the announced " +
                          std::to_string(q.payload_bytes));
    Backend* backend = lapack_backend_for(q.call);
    if (!backend) throw ProtocolError("this server has no backend that serves LAPACK");
    const uint64_t total = bytes + wire::reply_bytes(q.call);
    check_limits(s, total);
    s.arrivals[q.call_id] = {now_ns(), backend};
    Buffer b = Buffer::allocate(total, backend->staging());
    s.held_bytes += total;
    return b;
  }

  // LAPACK: large calls on a device backend that serves them, the rest on the host.
  Backend* lapack_backend_for(const wire::LapackCall& c) const {
    if (lapack_device && wire::flops(c) >= config.gpu_min_flops &&
        lapack_device->executor<LapackExecutor>()->serves_lapack(c))
      return lapack_device;
    return lapack_backend;
  }

  // The cost model, for now: large calls on the GPU, small ones where no copies are needed.
  Backend* backend_for(const wire::Level3Call& c) const {
    if (!level3_device) return level3_backend;
    const double bytes = static_cast<double>(wire::request_bytes(c) + wire::reply_bytes(c));
    return costs->prefer_device(wire::flops(c), bytes) ? level3_device : level3_backend;
  }

  // Throws ProtocolError if a call needing `total` bytes of memory is over the limits.
  void check_limits(const Session& s, uint64_t total) const {
    if (total > config.max_request_bytes)
      throw ProtocolError("call needs " + std::to_string(total) + " bytes, above this server's max_request_bytes (" +
                          std::to_string(config.max_request_bytes) + ")");
    if (s.held_bytes + total > config.max_client_bytes)
      throw ProtocolError("client holds too much memory on this server (max_client_bytes)");
  }

  static uint64_t extra_output_bytes(const wire::Level3Call& c) { return c.output_sent ? 0 : wire::reply_bytes(c); }

  // Whatever goes wrong while handling one peer's message ends that peer's session, not the server.
  void on_message(PeerId peer, std::vector<std::byte> header, Buffer payload, bool refused) {
    try {
      handle_message(peer, std::move(header), std::move(payload), refused);
    } catch (const std::exception& e) {
      reject(peer, std::string("server error: ") + e.what());
    }
  }

  void handle_message(PeerId peer, std::vector<std::byte> header, Buffer payload, bool refused) {
    Session* s = session(peer);
    if (!s || s->state == State::closing) return;
    if (!s->sink_refusal.empty()) return reject(peer, "request refused: " + s->sink_refusal);
    if (refused) {
      reject(peer, "request refused: " + (s->refusal.empty() ? std::string("payload refused") : s->refusal));
      return;
    }
    wire::Message m;
    try {
      m = wire::decode(header);
    } catch (const std::exception& e) {
      reject(peer, std::string("malformed request: ") + e.what());
      return;
    }
    switch (s->state) {
      case State::awaiting_hello:
        if (auto* h = std::get_if<wire::Hello>(&m)) return on_hello(*s, *h);
        return reject(peer, "expected hello");
      case State::awaiting_auth:
        if (auto* a = std::get_if<wire::Auth>(&m)) return on_auth(*s, *a);
        return reject(peer, "expected authentication");
      case State::ready:
        if (auto* c = std::get_if<wire::Blas3Call>(&m)) return on_call(*s, *c, std::move(payload));
        if (auto* c = std::get_if<wire::CallChunk>(&m)) return on_chunk(*s, c->call_id, c->chunk_index);
        if (auto* c = std::get_if<wire::LapackChunk>(&m)) return on_chunk(*s, c->call_id, c->chunk_index);
        if (auto* p = std::get_if<wire::Ping>(&m)) return on_ping(*s, *p, std::move(payload));
        if (auto* q = std::get_if<wire::LanesRequest>(&m)) return on_lanes(*s, *q);
        if (auto* q = std::get_if<wire::SinkRequest>(&m)) return on_sink_request(*s, *q);
        if (auto* d = std::get_if<wire::DirectLapack>(&m)) return on_direct(*s, *d);
        if (auto* q = std::get_if<wire::Proceed>(&m)) return on_proceed(*s, *q);
        if (auto* q = std::get_if<wire::LapackRequest>(&m)) return on_lapack(*s, *q, std::move(payload));
        if (auto* q = std::get_if<wire::StatusRequest>(&m))
          return send(peer, wire::StatusReply{q->call_id, status().dump()});
        return reject(peer, "unexpected message");
      default:
        return;
    }
  }

  void on_hello(Session& s, const wire::Hello& h) {
    s.client_name = h.client_name;
    s.client_nonce = h.client_nonce;
    s.server_nonce = random_nonce();
    s.state = State::awaiting_auth;
    send(s.peer, wire::Challenge{s.server_nonce, wire::server_proof(secret, s.client_nonce, s.server_nonce), server_name});
  }

  void on_auth(Session& s, const wire::Auth& a) {
    if (!macs_equal(a.client_proof, wire::client_proof(secret, s.server_nonce, s.client_nonce))) {
      ++refused_auth;
      spdlog::warn("session.auth_refused peer={} addr={} client=\"{}\"", s.peer, s.addr, s.client_name);
      send(s.peer, wire::AuthResult{false, "authentication refused: the client's secret does not match this server's"});
      close_soon(s);
      return;
    }
    s.state = State::ready;
    spdlog::info("session.authenticated peer={} addr={} client=\"{}\"", s.peer, s.addr, s.client_name);
    send(s.peer, wire::AuthResult{true, "welcome"});
  }

  // Benchmark traffic: the payload is dropped, or sent back (echo).
  void on_ping(Session& s, const wire::Ping& p, Buffer payload) {
    if (payload.size() != p.payload_bytes) return reject(s.peer, "ping payload does not match its announced size");
    count_ping(s, payload.size());
    const bool echo = p.flags & wire::Ping::echo;
    if (p.flags & wire::Ping::via_gpu) {
      if (!device_backend) return reject(s.peer, "this server has no GPU backend for device transfers");
      // Into GPU memory (and back) on a compute thread: copies of many MiB must not stall the
      // progress thread. The echo returns what came back from the GPU.
      auto in = std::make_shared<Buffer>(std::move(payload));
      auto back = echo ? std::make_shared<Buffer>(Buffer::allocate(in->size(), device_backend->staging())) : nullptr;
      PeerId peer = s.peer;
      uint64_t id = p.call_id;
      pool->submit([this, in, back, peer, id] {
        try {
          uint64_t ns = in->size() ? device_backend->device_round_trip(in->data(), back ? back->data() : nullptr, in->size()) : 0;
          uint64_t n = back ? back->size() : 0;
          complete({peer, wire::Pong{id, n, ns}, back, 0, n, ""});
        } catch (const std::exception& e) {
          complete({peer, wire::CallReply{id, false, e.what()}, nullptr, 0, 0, ""});
        }
      });
      return;
    }
    if (p.flags & wire::Ping::no_reply) return;
    if (!echo) return send(s.peer, wire::Pong{p.call_id});
    auto buf = std::make_shared<Buffer>(std::move(payload));
    std::vector<transport::Segment> out;
    if (buf->size()) out.push_back({buf->data(), buf->size()});
    worker->send(s.peer, wire::encode(wire::Pong{p.call_id, buf->size()}), std::move(out), [buf](bool) {});
  }

  void on_call(Session& s, const wire::Blas3Call& req, Buffer payload) {
    const uint64_t received = now_ns();
    uint64_t arrived = received;
    Backend* backend = nullptr;
    if (auto it = s.arrivals.find(req.call_id); it != s.arrivals.end()) {
      arrived = it->second.ns, backend = it->second.backend;
      s.arrivals.erase(it);
    }
    const wire::Level3Call& c = req.call;
    if (!backend) backend = backend_for(c);  // no payload arrived (empty inputs)
    const uint64_t in_bytes = req.payload_bytes;
    const uint64_t total = in_bytes + extra_output_bytes(c);
    if (payload.size() < total) {  // no payload arrived (empty inputs): on_payload did not allocate
      if (payload.size() != 0 || in_bytes != 0) return reject(s.peer, "payload size does not match the call");
      try {
        check_limits(s, total);
        payload = Buffer::allocate(total);
      } catch (const std::bad_alloc&) {
        return reject(s.peer, "server is out of memory for this call");
      } catch (const std::exception& e) {
        return reject(s.peer, std::string("request refused: ") + e.what());
      }
      s.held_bytes += total;
    }
    if (!c.output_sent) std::memset(payload.data() + in_bytes, 0, total - in_bytes);
    s.bytes_in += in_bytes;
    auto buf = std::make_shared<Buffer>(std::move(payload));
    PeerId peer = s.peer;
    uint64_t call_id = req.call_id;
    Blas3Executor* executor = backend->executor<Blas3Executor>();
    pool->submit([this, executor, c, buf, peer, call_id, in_bytes, arrived, received] {
      wire::CallReply reply{call_id, true, "", 0, received - arrived, now_ns() - received};
      const size_t out_bytes = wire::reply_bytes(c);
      const size_t out_offset = c.output_sent ? in_bytes - out_bytes : in_bytes;
      try {
        wire::Layout l = wire::layout(c);
        std::vector<const std::byte*> inputs;
        size_t offset = 0;
        for (const auto& o : l.inputs) {
          inputs.push_back(buf->data() + offset);
          offset += o.rows * o.cols * wire::element_bytes(c.scalar);
        }
        uint64_t t0 = now_ns();
        DeviceTiming device = executor->level3(c, inputs, buf->data() + out_offset);
        reply.compute_ns = now_ns() - t0;
        if (device.compute_ns) {  // a device backend says how its time divided
          reply.to_device_ns = device.to_device_ns;
          reply.compute_ns = device.compute_ns;
          reply.from_device_ns = device.from_device_ns;
          costs->device_call(wire::flops(c), device.compute_ns, double(in_bytes + out_bytes),
                             device.to_device_ns + device.from_device_ns);
        } else {
          costs->host_call(wire::flops(c), reply.compute_ns);
        }
        reply.payload_bytes = out_bytes;
      } catch (const std::exception& e) {
        reply.ok = false;
        reply.message = e.what();
      }
      complete({peer, reply, buf, out_offset, reply.ok ? out_bytes : 0, wire::call_name(c)});
    });
  }

  // ---- chunked calls ----

  // Where a chunk lands: in its call's staging buffer, the call being set up by whichever of its
  // chunks comes first. Throws ProtocolError when the chunk does not match its call or the call
  // is over the limits.
  template <class Chunk>
  transport::Landing chunk_landing(Session& s, const Chunk& chunk, uint64_t bytes) {
    if (bytes != wire::chunk_length(chunk)) throw ProtocolError("chunk size does not match its call");
    Chunk shape = chunk;
    shape.chunk_index = 0;
    std::vector<std::byte> shape_bytes = wire::encode(shape);
    std::shared_ptr<ChunkedCall> cc;
    if (auto it = s.chunked.find(chunk.call_id); it != s.chunked.end()) {
      if (it->second->shape_bytes != shape_bytes) throw ProtocolError("chunk does not match the rest of its call");
      cc = it->second;
    } else {
      if (s.chunked.size() >= kMaxChunkedCalls) throw ProtocolError("too many chunked calls in progress");
      cc = new_chunked(s, chunk.call_id, chunk.call, chunk.payload_bytes, chunk.chunk_bytes);
      cc->shape_bytes = std::move(shape_bytes);
      admit(s, cc);
    }
    uint8_t& state = cc->chunk_state[chunk.chunk_index];
    if (state != 0) throw ProtocolError("chunk " + std::to_string(chunk.chunk_index) + " sent twice");
    state = 1;
    return transport::Landing::receive(Buffer::borrow(cc->staging.data() + wire::chunk_offset(chunk), bytes, cc));
  }
  static constexpr size_t kMaxChunkedCalls = 64;

  // A chunked call of `payload_bytes` in chunks of `chunk_bytes`, set up on its backend. Throws
  // ProtocolError (limits) or std::bad_alloc.
  template <class Call>
  std::shared_ptr<ChunkedCall> new_chunked(Session& s, uint64_t call_id, const Call& call, uint64_t payload_bytes,
                                           uint64_t chunk_bytes) {
    auto cc = std::make_shared<ChunkedCall>();
    cc->peer = s.peer;
    cc->call_id = call_id;
    cc->payload_bytes = payload_bytes;
    cc->chunk_bytes = chunk_bytes;
    cc->chunk_state.assign(wire::chunk_count(payload_bytes, chunk_bytes), 0);
    cc->first_ns = now_ns();
    set_up(s, *cc, call);
    return cc;
  }

  // The call is in progress: its memory counts against the session.
  void admit(Session& s, const std::shared_ptr<ChunkedCall>& cc) {
    s.held_bytes += cc->staging_bytes;
    s.chunked[cc->call_id] = cc;
    ++chunked_active;
  }

  // A Level-3 call: blocks planned from the rates measured so far, on the backend the cost model
  // picks (spread over several GPUs where there are).
  void set_up(Session& s, ChunkedCall& cc, const wire::Level3Call& call) {
    cc.name = wire::call_name(call);
    cc.level3 = call;
    Plan plan = plan_pipeline(call, choose_block_cols(call, costs->pipeline_rates()));
    check_limits(s, plan.staging_bytes);
    cc.backend = backend_for(call);
    cc.staging = Buffer::allocate(plan.staging_bytes, cc.backend->staging());
    cc.staging_bytes = plan.staging_bytes;
    cc.setup_ns = now_ns() - cc.first_ns;
    try {
      if (cc.backend->has_device_memory() && level3_devices.size() > 1)
        cc.pipe = make_spread_pipeline(level3_devices, plan, cc.staging.data());
      if (!cc.pipe) cc.pipe = cc.backend->executor<Blas3Executor>()->pipeline(plan, cc.staging.data());
    } catch (const std::exception& e) {
      spdlog::warn("call.pipeline_unavailable backend={} error=\"{}\"", cc.backend->name(), e.what());
    }
    if (!cc.pipe) {
      // On the compute threads with level3(). A device backend busy with another pipeline would
      // copy A again for every block: there the call runs whole once its input is in.
      const int64_t cols = cc.backend->has_device_memory()
                               ? call.n
                               : std::max<int64_t>(choose_block_cols(call), int64_t(config.host_block_columns));
      plan = plan_pipeline(call, cols);
      // Host backends never read an output whose values were not sent, but keep it defined anyway.
      if (!call.output_sent) std::memset(cc.staging.data() + plan.output_offset, 0, plan.output_bytes);
      cc.pipe = make_pool_pipeline(*cc.backend->executor<Blas3Executor>(), plan, cc.staging.data(), *pool, [this] { worker->signal(); });
    }
    cc.pieces = result_pieces(plan);
  }

  // A LAPACK call: its result leaves in pieces of the chunk size.
  void set_up(Session& s, ChunkedCall& cc, const wire::LapackCall& call) {
    cc.name = wire::call_name(call);
    cc.lapack = true;
    cc.backend = lapack_backend_for(call);
    if (!cc.backend) throw ProtocolError("this server has no backend that serves LAPACK");
    const LapackPlan plan = plan_lapack(call, cc.chunk_bytes);
    check_limits(s, plan.staging_bytes);
    cc.staging = Buffer::allocate(plan.staging_bytes, cc.backend->staging());
    cc.staging_bytes = plan.staging_bytes;
    cc.setup_ns = now_ns() - cc.first_ns;
    try {
      cc.pipe = cc.backend->executor<LapackExecutor>()->lapack_pipeline(plan, cc.staging.data());
    } catch (const std::exception& e) {
      spdlog::warn("call.pipeline_unavailable backend={} error=\"{}\"", cc.backend->name(), e.what());
    }
    if (!cc.pipe)
      cc.pipe = make_pool_lapack_pipeline(*cc.backend->executor<LapackExecutor>(), plan, cc.staging.data(), *pool, [this] { worker->signal(); });
    cc.pieces = plan.pieces;
  }

  void on_chunk(Session& s, uint64_t call_id, uint64_t index) {
    auto it = s.chunked.find(call_id);
    if (it == s.chunked.end()) return reject(s.peer, "chunk of an unknown call");
    ChunkedCall& cc = *it->second;
    if (cc.direct || cc.chunk_state[index] != 1) return reject(s.peer, "chunk arrived without being announced");
    chunk_arrived(s, cc, index);
  }

  // Chunk `index` of the call's input is in its staging buffer.
  void chunk_arrived(Session& s, ChunkedCall& cc, uint64_t index) {
    cc.chunk_state[index] = 2;
    ++cc.arrived;
    while (cc.prefix_chunks < cc.chunk_state.size() && cc.chunk_state[cc.prefix_chunks] == 2) ++cc.prefix_chunks;
    if (cc.arrived == cc.chunk_state.size()) {
      cc.last_ns = now_ns();
      s.bytes_in += cc.payload_bytes;
    }
    if (!cc.error.empty()) return;
    try {
      cc.pipe->input(std::min(cc.prefix_chunks * cc.chunk_bytes, cc.payload_bytes));
    } catch (const std::exception& e) {
      fail_chunked(cc, e.what());
    }
  }

  void fail_chunked(ChunkedCall& cc, const std::string& why) {
    if (cc.error.empty()) cc.error = why.empty() ? "call failed" : why;
    cc.pipe.reset();  // waits for work still using the staging buffer
    if (cc.direct) {  // pieces held for the client's Proceed are not written now
      cc.sends_in_flight -= std::min<uint64_t>(cc.sends_in_flight, cc.direct->held.size());
      cc.direct->held.clear();
    }
  }

  // Sends finished pieces of results and, once everything is out, the reply. Returns whether any
  // chunked call still needs its device polled.
  bool progress_chunked() {
    bool polling = false;
    for (auto& [peer, s] : sessions) {
      for (auto it = s.chunked.begin(); it != s.chunked.end();) {
        ChunkedCall& cc = *it->second;
        if (cc.pipe) {
          try {
            for (size_t index : cc.pipe->finished()) send_piece(s, it->second, index);
          } catch (const std::exception& e) {
            fail_chunked(cc, e.what());
          }
        }
        const bool all_in = cc.arrived == cc.chunk_state.size();
        const bool computed = cc.error.empty() && cc.pieces_done == cc.pieces.size();
        if (all_in && cc.sends_in_flight == 0 && (computed || !cc.error.empty())) {
          finish_chunked(s, it->first, cc);
          it = s.chunked.erase(it);
          --chunked_active;
          continue;
        }
        if (cc.pipe && cc.pipe->needs_polling()) polling = true;
        ++it;
      }
    }
    return polling;
  }

  void send_piece(Session& s, const std::shared_ptr<ChunkedCall>& call, size_t index) {
    ChunkedCall& cc = *call;
    const ResultPiece& p = cc.pieces.at(index);
    ++cc.pieces_done;
    if (p.bytes == 0 || s.state == State::closing) return;
    if (cc.direct) {
      if (cc.direct->gated && !cc.direct->proceeded) {  // counted as in flight until written
        cc.direct->held.push_back(index);
        ++cc.sends_in_flight;
        return;
      }
      return put_piece(s, call, index);
    }
    ++cc.sends_in_flight;
    s.bytes_out += p.bytes;
    const transport::Segment piece{cc.staging.data() + p.staging_offset, p.bytes};
    worker->send(s.peer, wire::encode(wire::ReplyChunk{cc.call_id, p.result_offset, p.bytes}), {&piece, 1},
                 [call](bool) { --call->sends_in_flight; });
  }

  void finish_chunked(Session& s, uint64_t call_id, ChunkedCall& cc) {
    const bool ok = cc.error.empty();
    if (cc.direct) {
      ++direct_calls;
      for (CopyLanes::Key k : cc.direct->keys) lanes->drop_key(k);  // no copy uses them now
    }
    uint64_t to_device = 0, compute = 0, from_device = 0;
    int64_t info = 0;
    const uint64_t receive = cc.last_ns - cc.first_ns;
    if (cc.pipe) {
      to_device = cc.pipe->to_device_ns();
      compute = cc.pipe->compute_ns();
      from_device = cc.pipe->from_device_ns();
      info = cc.pipe->info();
      if (ok && cc.level3) {
        const double flops = wire::flops(*cc.level3);
        if (cc.backend->has_device_memory() && level3_devices.size() <= 1)  // spread: the sum is not one GPU's rate
          costs->device_call(flops, compute, 0, 0);
        else if (!cc.backend->has_device_memory())
          costs->host_call(flops, compute);
        costs->link(double(cc.payload_bytes), receive - std::min(receive, cc.setup_ns));
      }
    }
    cc.pipe.reset();
    spdlog::debug("call.pipelined peer={} call={} routine={} bytes_in={} pieces={} setup_ms={:.3f} receive_ms={:.3f} "
                  "to_device_ms={:.3f} compute_ms={:.3f} from_device_ms={:.3f} total_ms={:.3f}",
                  s.peer, call_id, cc.name, cc.payload_bytes, cc.pieces.size(), cc.setup_ns / 1e6, receive / 1e6,
                  to_device / 1e6, compute / 1e6, from_device / 1e6, (now_ns() - cc.first_ns) / 1e6);
    ++total_calls;
    ++pipelined_calls;
    ++calls_by_routine[cc.name];
    ++s.calls;
    if (!ok) {
      ++total_errors;
      ++s.errors;
      spdlog::warn("call.failed peer={} call={} routine={} error=\"{}\"", s.peer, call_id, cc.name, cc.error);
    }
    s.held_bytes -= std::min(s.held_bytes, cc.staging_bytes);
    if (s.state == State::closing) return;
    if (cc.lapack)
      send(s.peer, wire::LapackReply{call_id, ok, cc.error, ok ? info : 0, 0, receive, 0, to_device, compute, from_device});
    else
      send(s.peer, wire::CallReply{call_id, ok, cc.error, 0, receive, 0, to_device, compute, from_device});
  }

  size_t chunked_active = 0;

  // ---- the direct path ----

  void on_lanes(Session& s, const wire::LanesRequest& q) {
    if (!lanes) return send(s.peer, wire::LanesReply{q.call_id, 0, lanes_unavailable});
    if (s.remote) lanes->detach(*s.remote);
    // A client on this host that proves its process id (it holds this session's nonce where it
    // says) is copied with CMA; any other through UCX.
    const bool local = q.pid != 0 && CopyLanes::verify_process(static_cast<int>(q.pid), q.probe_address,
                                                               std::as_bytes(std::span(s.server_nonce)));
    s.remote = lanes->attach(q.worker_address, local ? static_cast<int>(q.pid) : 0);
    spdlog::info("session.lanes peer={} lanes={} copies={}", s.peer, lanes->lanes(), local ? "cma" : "ucx");
    send(s.peer, wire::LanesReply{q.call_id, lanes->lanes(), local ? "cma" : "ucx"});
  }

  // Sets the call up like a chunked one, then copies its input in chunks over the lanes; a call
  // the server cannot take is answered with a failed LapackReply (the client runs it locally).
  void on_direct(Session& s, const wire::DirectLapack& d) {
    if (!lanes || !s.remote) return reject(s.peer, "direct call without copy lanes (no LanesRequest answered)");
    if (s.chunked.count(d.call_id) || s.arrivals.count(d.call_id)) return reject(s.peer, "call id already in use");
    if (s.chunked.size() >= kMaxChunkedCalls) return reject(s.peer, "too many chunked calls in progress");
    std::shared_ptr<ChunkedCall> call;
    try {
      call = new_chunked(s, d.call_id, d.call, wire::request_bytes(d.call), config.direct_chunk_bytes);
    } catch (const std::bad_alloc&) {
      return send(s.peer, wire::LapackReply{d.call_id, false, "server is out of memory for this call"});
    } catch (const std::exception& e) {
      return send(s.peer, wire::LapackReply{d.call_id, false, e.what()});
    }
    ChunkedCall& cc = *call;
    auto& dc = *(cc.direct = std::make_unique<DirectCopies>());
    dc.remote = *s.remote;
    for (const auto& k : d.keys) dc.keys.push_back(lanes->add_key(dc.remote, k));
    dc.input = d.input;
    dc.output = d.output;
    dc.gated = d.gated;
    dc.copies_left.assign(cc.chunk_state.size(), 0);
    admit(s, call);
    for (uint64_t i = 0; i < cc.chunk_state.size(); ++i) {
      const uint64_t begin = i * cc.chunk_bytes, end = std::min(begin + cc.chunk_bytes, cc.payload_bytes);
      cc.chunk_state[i] = 1;
      copy_range(call, dc.input, begin, end, cc.staging.data() + begin, false, i, static_cast<unsigned>(i));
    }
  }

  // Queues the copies of packed bytes [begin, end) of `extents` to or from `local`, one per extent
  // touched, on lanes from `lane` on.
  void copy_range(const std::shared_ptr<ChunkedCall>& call, const std::vector<wire::Extent>& extents, uint64_t begin,
                  uint64_t end, std::byte* local, bool put, uint64_t index, unsigned lane) {
    DirectCopies& dc = *call->direct;
    uint64_t at = 0;
    for (const wire::Extent& x : extents) {
      const uint64_t lo = std::max(begin, at), hi = std::min(end, at + x.bytes);
      if (lo < hi) {
        if (put) ++call->sends_in_flight;
        else ++dc.copies_left[index];
        const CopyLanes::Copy c{put, dc.remote, dc.keys[x.key], x.address + (lo - at), local + (lo - begin), hi - lo};
        lanes->copy(lane++, c, [this, call, put, index](bool ok) {
          {
            std::lock_guard lk(copies_mu);
            copies_done.push_back({call, put, index, ok});
            any_copies.store(true, std::memory_order_release);
          }
          worker->signal();
        });
      }
      at += x.bytes;
    }
  }

  void put_piece(Session& s, const std::shared_ptr<ChunkedCall>& call, size_t index) {
    const ResultPiece& p = call->pieces[index];
    s.bytes_out += p.bytes;
    copy_range(call, call->direct->output, p.result_offset, p.result_offset + p.bytes,
               call->staging.data() + p.staging_offset, true, index, static_cast<unsigned>(index));
  }

  void on_proceed(Session& s, const wire::Proceed& q) {
    auto it = s.chunked.find(q.call_id);
    if (it == s.chunked.end()) return;  // the call already failed and was answered
    ChunkedCall& cc = *it->second;
    if (!cc.direct || !cc.direct->gated || cc.direct->proceeded) return reject(s.peer, "unexpected proceed");
    cc.direct->proceeded = true;
    std::vector<size_t> held = std::move(cc.direct->held);
    cc.direct->held.clear();
    cc.sends_in_flight -= std::min<uint64_t>(cc.sends_in_flight, held.size());
    for (size_t index : held) put_piece(s, it->second, index);
  }

  void deliver_copies() {
    if (!any_copies.load(std::memory_order_acquire)) return;
    std::vector<CopyDone> batch;
    {
      std::lock_guard lk(copies_mu);
      batch.swap(copies_done);
      any_copies.store(false, std::memory_order_relaxed);
    }
    for (CopyDone& d : batch) {
      ChunkedCall& cc = *d.call;
      Session* s = session(cc.peer);
      auto it = s ? s->chunked.find(cc.call_id) : decltype(s->chunked.end()){};
      if (!s || it == s->chunked.end() || it->second != d.call) continue;  // the session or call is gone
      if (d.put) {
        --cc.sends_in_flight;
        if (!d.ok) fail_chunked(cc, "copying the result into the client's memory failed");
        continue;
      }
      if (!d.ok) fail_chunked(cc, "copying the input from the client's memory failed");
      if (--cc.direct->copies_left[d.index] == 0) {
        chunk_arrived(*s, cc, d.index);
        if (cc.arrived == cc.chunk_state.size() && cc.direct->gated && s->state != State::closing)
          send(s->peer, wire::InputTaken{cc.call_id});
      }
    }
  }

  // Mirrors on_call. The buffer holds the inputs, then the outputs (reply payload).
  void on_lapack(Session& s, const wire::LapackRequest& req, Buffer payload) {
    const uint64_t received = now_ns();
    uint64_t arrived = received;
    Backend* backend = nullptr;
    if (auto it = s.arrivals.find(req.call_id); it != s.arrivals.end()) {
      arrived = it->second.ns, backend = it->second.backend;
      s.arrivals.erase(it);
    }
    const wire::LapackCall& c = req.call;
    if (!backend) backend = lapack_backend_for(c);
    if (!backend) return reject(s.peer, "this server has no backend that serves LAPACK");
    const uint64_t in_bytes = req.payload_bytes;
    const uint64_t total = in_bytes + wire::reply_bytes(c);
    if (payload.size() != total) {  // no payload arrived (empty inputs): on_payload did not allocate
      if (payload.size() != 0 || in_bytes != 0) return reject(s.peer, "payload size does not match the call");
      try {
        check_limits(s, total);
        payload = Buffer::allocate(std::max<uint64_t>(total, 1));
      } catch (const std::bad_alloc&) {
        return reject(s.peer, "server is out of memory for this call");
      } catch (const std::exception& e) {
        return reject(s.peer, std::string("request refused: ") + e.what());
      }
      s.held_bytes += payload.size();
    }
    s.bytes_in += in_bytes;
    auto buf = std::make_shared<Buffer>(std::move(payload));
    PeerId peer = s.peer;
    uint64_t call_id = req.call_id;
    LapackExecutor* executor = backend->executor<LapackExecutor>();
    pool->submit([this, executor, c, buf, peer, call_id, in_bytes, arrived, received] {
      wire::LapackReply reply{call_id, true, "", 0, 0, received - arrived, now_ns() - received};
      const uint64_t out_bytes = wire::reply_bytes(c);
      try {
        const wire::LapackLayout l = wire::layout(c);
        std::vector<const std::byte*> inputs;
        std::vector<std::byte*> outputs;
        uint64_t offset = 0;
        for (const auto& a : l.inputs) {
          inputs.push_back(buf->data() + offset);
          offset += wire::array_bytes(a, c.scalar);
        }
        for (const auto& a : l.outputs) {
          std::byte* p = buf->data() + offset;
          const uint64_t n = wire::array_bytes(a, c.scalar);
          if (a.from_input >= 0) std::memcpy(p, inputs[a.from_input], n);
          else std::memset(p, 0, n);
          outputs.push_back(p);
          offset += n;
        }
        wire::check_inputs(c, inputs.data());
        DeviceTiming device;
        const uint64_t t0 = now_ns();
        reply.info = executor->lapack(c, inputs, outputs, device);
        reply.compute_ns = now_ns() - t0;
        if (device.compute_ns) {
          reply.to_device_ns = device.to_device_ns;
          reply.compute_ns = device.compute_ns;
          reply.from_device_ns = device.from_device_ns;
        }
        reply.payload_bytes = out_bytes;
      } catch (const std::exception& e) {
        reply.ok = false;
        reply.message = e.what();
        reply.info = 0;
      }
      complete({peer, reply, buf, in_bytes, reply.ok ? out_bytes : 0, wire::call_name(c)});
    });
  }

  nlohmann::json status() const;

  void complete(Completion c) {
    {
      std::lock_guard lk(done_mu);
      done.push_back(std::move(c));
      any_done.store(true, std::memory_order_release);
    }
    worker->signal();
  }

  void deliver_completions() {
    if (!any_done.load(std::memory_order_acquire)) return;  // the progress loop's common case: no lock
    std::vector<Completion> batch;
    {
      std::lock_guard lk(done_mu);
      batch.swap(done);
      any_done.store(false, std::memory_order_relaxed);
    }
    for (Completion& d : batch) {
      Session* s = session(d.peer);
      if (!d.routine.empty()) {
        bool ok = true;
        uint64_t call_id = 0;
        std::string message;
        if (auto* r = std::get_if<wire::CallReply>(&d.reply)) ok = r->ok, call_id = r->call_id, message = r->message;
        if (auto* r = std::get_if<wire::LapackReply>(&d.reply)) ok = r->ok, call_id = r->call_id, message = r->message;
        ++total_calls;
        ++calls_by_routine[d.routine];
        if (!ok) {
          ++total_errors;
          spdlog::warn("call.failed peer={} call={} routine={} error=\"{}\"", d.peer, call_id, d.routine, message);
        }
        if (s) {
          ++s->calls;
          if (!ok) ++s->errors;
        }
      }
      if (!s || s->state == State::closing) continue;  // the client left; its result is dropped
      std::vector<transport::Segment> out;
      if (d.bytes) out.push_back({d.buffer->data() + d.offset, d.bytes});
      s->bytes_out += d.bytes;
      PeerId peer = d.peer;
      auto buf = d.buffer;
      worker->send(peer, wire::encode(d.reply), std::move(out), [this, peer, buf](bool) {
        Session* s2 = session(peer);
        if (s2 && buf) s2->held_bytes -= std::min(s2->held_bytes, uint64_t(buf->size()));  // pings hold none
      });
    }
  }

  // Rejects connections that did not authenticate in time; hangs up on those being closed.
  void housekeeping() {
    const uint64_t limit = static_cast<uint64_t>(config.auth_timeout_seconds * 1e9);
    const uint64_t now = now_ns();
    std::vector<PeerId> late, done;
    for (auto& [peer, s] : sessions) {
      if ((s.state == State::awaiting_hello || s.state == State::awaiting_auth) && now - s.connected_ns > limit)
        late.push_back(peer);
      if (s.state == State::closing && now >= s.close_at_ns) done.push_back(peer);
    }
    for (PeerId p : late) reject(p, "authentication not completed in time");
    for (PeerId p : done) close(p);
  }
};

Server::Server(Config config, std::vector<std::unique_ptr<Backend>> backends) : impl_(std::make_unique<Impl>()) {
  validate(config);
  if (backends.empty()) throw Error("no backend available");
  impl_->config = std::move(config);
  impl_->costs = std::make_unique<CostModel>(impl_->config.gpu_min_flops);
  impl_->backends = std::move(backends);
  for (auto& b : impl_->backends) {
    const bool device = b->has_device_memory();
    if (!impl_->device_backend && device) impl_->device_backend = b.get();
    if (auto* blas3 = b->executor<Blas3Executor>()) {
      Backend*& slot = device ? impl_->level3_device : impl_->level3_backend;
      if (!slot) slot = b.get();
      if (device) impl_->level3_devices.push_back(blas3);
    }
    Backend*& lapack_slot = device ? impl_->lapack_device : impl_->lapack_backend;
    if (!lapack_slot && b->executor<LapackExecutor>()) lapack_slot = b.get();
  }
  if (!impl_->level3_backend) impl_->level3_backend = impl_->level3_device;
  if (!impl_->level3_backend) throw Error("no backend serves Level-3 BLAS");
  impl_->secret = read_secret(impl_->config.token_file.empty() ? default_token_path() : impl_->config.token_file);
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  impl_->server_name = host;
}

Server::~Server() {
  impl_->lanes.reset();   // copies in flight end (their completions signal the worker)
  impl_->pool.reset();    // running calls finish before the transport goes
  impl_->worker.reset();
}

uint16_t Server::start() {
  Impl& m = *impl_;
  transport::Events ev;
  ev.on_connect = [&m](PeerId p, const std::string& addr) { m.on_connect(p, addr); };
  ev.on_disconnect = [&m](PeerId p, const std::string& why) { m.end_session(p, why); };
  ev.on_payload = [&m](PeerId p, std::span<const std::byte> h, uint64_t n) { return m.on_payload(p, h, n); };
  ev.on_sink = [&m](PeerId p, uint64_t n) { return m.on_sink(p, n); };
  ev.on_message = [&m](PeerId p, std::vector<std::byte> h, Buffer b, bool refused) {
    m.on_message(p, std::move(h), std::move(b), refused);
  };
  uint64_t cache = m.config.buffer_cache_bytes;
  if (cache == 0) cache = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE)) / 8;
  Buffer::set_cache_limit(cache);
  m.worker = std::make_unique<transport::Worker>(std::move(ev));
  m.port = m.worker->listen(m.config.host, m.config.port);
  m.pool = std::make_unique<ComputePool>(m.config.compute_threads);
  if (m.config.copy_lanes == 0) {
    m.lanes_unavailable = "this server's direct path is off (copy_lanes = 0)";
  } else {
    try {
      m.lanes = std::make_unique<CopyLanes>(m.config.copy_lanes);
    } catch (const std::exception& e) {
      m.lanes_unavailable = std::string("this server has no copy lanes: ") + e.what();
      spdlog::warn("serve.copy_lanes_unavailable error=\"{}\"", e.what());
    }
  }
  std::string names;
  for (auto& b : m.backends) names += (names.empty() ? "" : ",") + b->name();
  spdlog::info("serve.listen addr={}:{} backends={} compute_threads={} copy_lanes={}", m.config.host, m.port, names,
               m.config.compute_threads, m.lanes ? m.lanes->lanes() : 0);
  return m.port;
}

void Server::run() {
  Impl& m = *impl_;
  uint64_t last_housekeeping = now_ns();
  uint64_t last_activity = now_ns();
  while (!m.stopping.load()) {
    bool busy = m.worker->progress();
    m.deliver_completions();
    m.deliver_copies();
    const bool polling = m.chunked_active && m.progress_chunked();
    uint64_t now = now_ns();
    if (polling) busy = true;  // a device's copies signal nobody: keep looking
    if (busy) last_activity = now;
    if (now - last_housekeeping > 100'000'000) {
      m.housekeeping();
      last_housekeeping = now;
    }
    // After activity poll on for low latency: first pausing the core between empty polls (no
    // system call, and fewer reads of the shared-memory queue a client is writing into), for
    // idle_spin_ns; then yielding on each, so compute threads (and the BLAS library's own) get
    // the core; after 2 ms sleep until the transport or a compute thread wakes us.
    if (now - last_activity > 2'000'000)
      m.worker->wait(100);
    else if (!busy && now - last_activity < m.config.idle_spin_ns)
      pause_core(16);
    else if (!busy)
      sched_yield();
  }
  spdlog::info("serve.stopping sessions={}", m.sessions.size());
}

void Server::stop() {
  impl_->stopping.store(true);
  if (impl_->worker) impl_->worker->signal();
}

nlohmann::json Server::status() const { return impl_->status(); }

nlohmann::json Server::Impl::status() const {
  const Impl& m = *this;
  nlohmann::json clients = nlohmann::json::array();
  for (const auto& [peer, s] : m.sessions) {
    clients.push_back({{"id", peer},
                       {"address", s.addr},
                       {"client", s.client_name},
                       {"authenticated", s.state == State::ready},
                       {"connected_seconds", (now_ns() - s.connected_ns) / 1e9},
                       {"calls", s.calls},
                       {"errors", s.errors},
                       {"bytes_in", s.bytes_in},
                       {"bytes_out", s.bytes_out},
                       {"pings", s.pings},
                       {"ping_bytes", s.ping_bytes}});
  }
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& b : m.backends) backends.push_back(b->describe());
  return {{"version", OUTBOARD_VERSION},
          {"server", m.server_name},
          {"listen", m.config.host + ":" + std::to_string(m.port)},
          {"uptime_seconds", (now_ns() - m.started_ns) / 1e9},
          {"backends", backends},
          {"calls", m.total_calls},
          {"pipelined_calls", m.pipelined_calls},
          {"direct_calls", m.direct_calls},
          {"errors", m.total_errors},
          {"calls_by_routine", m.calls_by_routine},
          {"connections", m.total_connections},
          {"refused_authentications", m.refused_auth},
          {"pings", m.total_pings},
          {"clients", clients}};
}

}  // namespace outboard::server
