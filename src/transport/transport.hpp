// The transport: messages between peers over UCX (ucp). Nothing above this header sees UCX.
//
// A message is a small header (the encoded wire message, sent as an active message) plus an
// optional bulk payload given as a list of memory segments; UCX carries small payloads eagerly and
// large ones by rendezvous (zero-copy over shared memory/CMA, RDMA where the network has it). The
// receiver chooses where a payload lands before it is pulled, so the upper layer can put it
// straight into its own buffer.
//
// A Worker is not thread-safe: one thread at a time calls its methods (the server's progress
// thread; on the client, whichever application thread holds the connection's lock). Only
// signal() may be called from any thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "transport/buffer.hpp"

namespace outboard::transport {

using PeerId = uint64_t;
struct SealKeys;  // seal.hpp
struct Ucx;  // one instance of the UCX libraries (ucx.hpp, private to the transport)

// What to do with an arriving message's payload; on_payload's answer.
class Landing {
 public:
  enum class Action { refuse, receive, discard };
  // Refused: the message is delivered with payload_refused set and an empty payload.
  static Landing refuse() { return Landing(Action::refuse, Buffer()); }
  // Received into `into` (at least the payload's size), then the message is delivered.
  static Landing receive(Buffer into) { return Landing(Action::receive, std::move(into)); }
  // Consumed: on_payload has checked the message and handled it entirely, the payload is not
  // wanted. The transport takes it off the wire without keeping it (eager data is left where it
  // arrived; rendezvous data is pulled into scratch memory, so the sender's transfer completes as
  // usual) and delivers nothing. on_payload runs inside the arrival: it must not send or close.
  static Landing discard() { return Landing(Action::discard, Buffer()); }
  Landing() = default;
  Landing(std::optional<Buffer> b)  // nullopt: refuse; a buffer: receive into it
      : action_(b ? Action::receive : Action::refuse), buffer_(b ? std::move(*b) : Buffer()) {}

  Action action() const { return action_; }
  Buffer& buffer() { return buffer_; }

 private:
  Landing(Action a, Buffer b) : action_(a), buffer_(std::move(b)) {}
  Action action_ = Action::refuse;
  Buffer buffer_;
};

struct Events {
  // Server side: a client connected; addr is "ip:port".
  std::function<void(PeerId, const std::string& addr)> on_connect;
  // The peer is gone (closed, failed, unreachable). Not called after close(peer).
  std::function<void(PeerId, const std::string& reason)> on_disconnect;
  // A message with a payload of `bytes` is arriving: say where it should land, or refuse it, or
  // consume it whole (see Landing). Called during progress(), inside the arrival, before messages
  // that arrived earlier but are not yet delivered by on_message; without it payloads are refused.
  std::function<Landing(PeerId, std::span<const std::byte> header, uint64_t bytes)> on_payload;
  // A whole message (header and payload) has arrived.
  std::function<void(PeerId, std::vector<std::byte> header, Buffer payload, bool payload_refused)> on_message;
  // A payload of `bytes` arrived in the sink this worker opened for the peer (open_sink). Return
  // false to refuse it; it is dropped either way (see open_sink). Runs inside the arrival, like
  // on_payload: it must not send or close. Without it sink payloads are refused.
  std::function<bool(PeerId, uint64_t bytes)> on_sink;
  // Instead of on_payload, where set: the arrival is kept under `ticket` and its landing decided
  // later, by Worker::land(ticket, ...); until then the message waits (and its rendezvous data
  // on the sender). Runs inside the arrival like on_payload. For workers whose landings are
  // decided on another thread (lane_threads.hpp); not for protected peers (on_payload serves them).
  std::function<void(PeerId, std::span<const std::byte> header, uint64_t bytes, uint64_t ticket)> on_payload_later;
};

struct Segment {
  const void* data;
  size_t bytes;
};

// A send's completion without allocation: fn(arg, ok). See Worker::send for when it runs.
struct SendDone {
  void (*fn)(void* arg, bool ok) = nullptr;
  void* arg = nullptr;
};

// Memory of this process that peers may read and write with one-sided copies (CopyLanes), for
// as long as this object lives; it must not outlive the Worker that made it. Move-only.
class Registration {
 public:
  Registration() = default;
  Registration(Registration&& o) noexcept;
  Registration& operator=(Registration&& o) noexcept;
  ~Registration();
  // What a peer needs to reach this memory: its packed remote key.
  const std::vector<std::byte>& key() const { return key_; }
  bool valid() const { return handle_ != nullptr; }

 private:
  friend class Worker;
  void release();
  const Ucx* ucx_ = nullptr;  // the Worker's UCX instance
  int owner_ = 0;             // the process that registered it
  void* context_ = nullptr;   // the Worker's ucp_context_h
  void* handle_ = nullptr;   // ucp_mem_h
  std::vector<std::byte> key_;
};

struct Options {
  // Seconds between keepalive probes, so a dead peer is noticed during a long wait.
  double keepalive_seconds = 1.0;
  // Log (spdlog, once) when UCX keeps reporting progress with nothing of ours under way: the
  // server's log; a client inside an application writes nothing.
  bool log_busy_without_work = false;
};

// A Worker belongs to the process that made it. In a process forked from that one it must not be
// used, and destroying it there leaves its UCX objects alone (they are the parent's); a Worker
// made in a forked process runs on a fresh copy of UCX of its own (ucx.hpp says why). The same
// holds for CopyLanes and Registration.
class Worker {
 public:
  explicit Worker(Events events, Options options = {});
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts accepting connections; port 0 picks a free one. Returns the bound port.
  uint16_t listen(const std::string& host, uint16_t port);
  // Starts connecting; failures arrive as on_disconnect. Throws on a bad address.
  PeerId connect(const std::string& host, uint16_t port);
  // The longest header send() takes (it throws Error beyond): UCX 1.13's own limit is about
  // 8 KB (8100-8140 bytes of active-message header here, 8256 for a rendezvous's whole request).
  static constexpr size_t kMaxHeaderBytes = 8192 - 256;
  // Sends header + payload. The payload memory must stay valid until `done` runs (from a later
  // progress(), or from close()/the destructor with ok = false). The header is copied. `done` may
  // be empty; a send that UCX completes at once, with no `done`, costs no allocation at all.
  void send(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload,
            std::function<void(bool ok)> done);
  // The same with a plain completion: no allocation for sends in steady state. When UCX completes
  // the send at once, done(ok = true) runs inside this call; otherwise as above.
  void send(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload, SendDone done);
  // The same with nothing copied or kept per send: `header`, `data` and `*done` are the caller's
  // and must stay valid until done runs (inside this call when UCX completes at once, else as
  // above). For streams of small messages, where the bookkeeping of send() costs a quarter of
  // the time per message.
  void send_borrowed(PeerId peer, std::span<const std::byte> header, const void* data, size_t bytes,
                     const SendDone* done);
  // A sink: a one-way channel from `peer` whose payloads are counted and dropped, the fastest
  // way to stream (benchmarks). Its messages carry no header and no sender endpoint: UCX hands
  // them to an active-message id of the sink's own, and that id is what says whose they are. So
  // a peer that guesses the id can send into another's sink: a sink may carry nothing whose
  // sender matters beyond accounting. Eager payloads are left where they arrived; rendezvous ones
  // are pulled into scratch memory (the sender's transfer must complete), unless on_sink refused
  // them. One sink per peer (asked again: the same id), closed with the peer; its id comes back
  // only after all kMaxSinks ids have been used. Ids are 1 .. kMaxSinks; throws Error when all
  // are open. What arrives for an id no open sink has (never opened, closed, or any other id a
  // peer may name), eager or rendezvous, is dropped unreported.
  uint32_t open_sink(PeerId peer);
  static constexpr uint32_t kMaxSinks = 4096;
  // Sends `bytes` from `data` into the peer's sink `sink` (the id its open_sink returned, learned
  // from the peer), borrowed as send_borrowed is: `data` and `*done` stay valid until done runs.
  // Only once a message from the peer has arrived (the endpoint is then wired up: UCX 1.13 fails
  // such sends queued before); until then the send fails (done(false), from progress()).
  // Throws Error for an id outside 1 .. kMaxSinks.
  void send_to_sink(PeerId peer, uint32_t sink, const void* data, size_t bytes, const SendDone* done);
  // Lanes: connections whose bytes are moved by a UCX worker and a thread of their own, so that
  // several connections carrying bulk data across TCP are not all bound to the one core of the
  // thread that calls progress() (one thread per side held 4 and 8 connections to one's rate).
  // Their peers are used like any other (send, close, events from progress(), on_payload
  // included, on this worker's thread), except: no sinks, no protect(), and close() returns once
  // the lane's thread has closed it. listen_lanes: `count` listeners on `host`, one per thread,
  // each on a port of its own (returned); connect_lane: one connection, on a thread of its own.
  // first_port: lane i on first_port + i; 0: free ports. Throws Error when one cannot listen.
  std::vector<uint16_t> listen_lanes(const std::string& host, unsigned count, uint16_t first_port = 0);
  PeerId connect_lane(const std::string& host, uint16_t port);
  // Whether the peer is a lane's (listen_lanes, connect_lane).
  static bool is_lane(PeerId peer);
  // Lands an arrival kept by Events::on_payload_later (a peer gone since: dropped).
  void land(uint64_t ticket, Landing landing);
  // Closes the connection. Forced: now, pending sends complete with ok = false. Otherwise what
  // was sent is delivered first (for a last error message before hanging up).
  void close(PeerId peer, bool force = true);
  bool connected(PeerId peer) const;
  // Whether a connection this worker started has reached the peer's host: its socket there is
  // connected (the peer's port took it and has not reset it). Before the peer's first message
  // that is all there is to know of it: a process whose port takes connections is alive, though
  // not necessarily getting to them.
  bool reached(PeerId peer) const;

  // Encrypted sessions: from now on every message to and from `peer` is sealed (seal.hpp: an
  // AEAD per direction, numbered per direction), here, where every message passes, so nothing the
  // layers above send can be missed. Called by the layer above once its handshake derived the
  // keys: for what it sends after this call and what arrives after it (the peer switches at the
  // same point of the handshake). Headers are opened as they arrive, in the sender's order, and
  // must come with the counter expected next; payloads are sealed into memory of the worker's
  // and opened, after arrival, into the landing buffer: on_payload and on_message see the
  // plaintext and its size, as before. A message that is not sealed, does not authenticate, or
  // comes out of order ends the connection (on_disconnect, with why: "encrypted session: ..."). Sinks are refused for a
  // protected peer (open_sink throws, send_to_sink fails): their messages have no header to
  // carry a seal. One-sided copies (CopyLanes, register_memory) are not covered: the layer above
  // must not use them for such a peer.
  void protect(PeerId peer, const SealKeys& keys);
  bool is_protected(PeerId peer) const;

  // What the worker holds per connection: peers connected, peers dropped whose endpoint is still
  // closing (freed at a later progress()), and of those the closes UCX has not finished.
  struct Tables {
    size_t peers = 0, retiring = 0, closes_in_flight = 0;
    // Between this worker and its lanes' threads (listen_lanes): events not yet delivered,
    // commands not yet run, arrivals whose landing their lane has not yet run.
    uint64_t lane_events_waiting = 0, lane_commands_waiting = 0, lane_landings_waiting = 0;
  };
  Tables tables() const;

  // Whether messages from this host's peers still arrive: a peer killed while writing into UCX
  // 1.13's shared-memory receive queue stops every later message, from every peer, for good
  // (receive_probe.hpp). Call it regularly from the progress thread: while `keep_probing` it
  // sends this worker a probe of its own, one at a time, the next `interval_seconds` after the
  // last arrived; it returns false once one has waited `patience_seconds` while progress() was
  // called. Then only a new worker (in practice a new process) receives again.
  bool receiving(double interval_seconds, double patience_seconds, bool keep_probing);
  // The probes receiving() has sent and those that arrived.
  struct ProbeCounts {
    uint64_t sent = 0, arrived = 0;
  };
  ProbeCounts probe_counts() const;

  // Makes progress and delivers events; returns true if anything happened (with no connection
  // open, UCX's own progress alone counts only for 1000 rounds in a row: issue 33's idle spin).
  bool progress();
  // Blocking wait, in two steps so a client can release its lock between them: arm() (like the
  // other methods, one thread at a time) returns false if events are already pending; block()
  // (thread-safe) then sleeps until something may have happened, signal() was called, or
  // timeout_ms passed.
  bool arm();
  void block(int timeout_ms);
  // arm() then block(); where UCX will not arm round after round while nothing happens (progress
  // with no connection open, or none at all), sleeps a few milliseconds instead of returning at once.
  void wait(int timeout_ms);
  // Wakes a thread in block(). Thread-safe.
  void signal();

  // This worker's UCX address: with it a peer's CopyLanes reaches memory registered here.
  std::vector<std::byte> address() const;
  // Lets peers that have this worker's address copy to and from [data, data + bytes) one-sidedly.
  // Throws Error when UCX cannot register it.
  Registration register_memory(void* data, size_t bytes);

  // Transport in use towards a peer, e.g. "posix/memory; cma/memory", for diagnostics.
  std::string describe(PeerId peer) const;

 private:
  void send_op(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload,
               std::function<void(bool)> done, SendDone plain);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace outboard::transport
