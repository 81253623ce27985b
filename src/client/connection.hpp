// One authenticated connection to one Outboard server. Thread-safe: application threads issue
// requests concurrently; whichever thread is waiting drives the transport for all of them.
#pragma once
#include <unistd.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/settings.hpp"
#include "client/resident_inputs.hpp"
#include "common/secret.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

namespace outboard::client {

class Connection {
 public:
  // How many connect timeouts the handshake may take while the server's port holds the connection
  // (a server swamped by a storm of clients: see the constructor).
  static constexpr double kHandshakePatience = 6;
  // Connects and authenticates. Throws Error saying why not: unreachable, refused, timed out, or
  // the server could not prove it knows the secret.
  // `encrypt` (OUTBOARD_ENCRYPT=1): insist on an encrypted session; a server that does not offer
  // it refuses. A server that requires it refuses a client that does not ask.
  Connection(const ServerAddress& server, const Secret& secret, const std::string& client_name,
             double connect_timeout_seconds, const std::string& identity = "", bool encrypt = false);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Whether the server's UCX copies (a client it cannot copy with CMA) are used where UCX runs
  // its one-sided operations over TCP. By default not: such a session's calls go in chunked
  // messages, several times faster over TCP (Settings::direct_over_tcp).
  void set_ucx_copies_over_tcp(bool allow) { ucx_over_tcp_ = allow; }

  // Lanes: over how many connections in all (this one and lanes, wire::JoinSession) chunked calls
  // and streams may travel; the server's offer bounds it. They are opened at the first chunked
  // call or stream, and only where the session's data crosses TCP: one TCP connection moves
  // about a core's worth, less than a fast link, while on one host shared memory outruns them.
  // 1 (the default): this connection only.
  void set_link_lanes(unsigned wanted);
  // The connections chunks and streams travel over now: 1 + the lanes joined.
  unsigned link_lanes_in_use();
  // Whether bulk data not tied to a chunked call (remote OpenCL's: send_lane_data, wire::ReplyChunk
  // answers) goes over lanes: they are opened (once, as for a chunked call) and carry all bulk data,
  // each on a thread of its own. False on one host, with one connection, or without lane threads.
  bool bulk_over_lanes();
  // Sends `bytes` from `data` as transfer `transfer`'s wire::ClChunks of `chunk_bytes`, dealt out
  // over the lanes, kDefaultChunkWindow chunks in flight on each (of every transfer, in the order
  // they were asked); `sent(ok)` runs once when every chunk is sent (the data may then change),
  // like notify()'s. Throws Error if the connection is dead.
  void send_lane_data(uint64_t transfer, const void* data, uint64_t bytes, uint64_t chunk_bytes,
                      std::function<void(bool ok)> sent);

  // Sends `request` (its call_id is assigned here) with `payload`, and waits for its answer. A
  // reply payload lands in reply_buffer, which must hold the announced bytes. Throws Error if the
  // connection fails or timeout_seconds (0 = none) pass; the connection is then unusable.
  wire::Message request(wire::Message request, std::vector<transport::Segment> payload, void* reply_buffer,
                        uint64_t reply_capacity, double timeout_seconds);

  // Sends a message the server does not answer (wire::FftPlan, FftRelease, ClRequest without
  // call id) and returns at once; `payload` must stay valid until `sent` runs (from whichever
  // thread drives the connection, holding it: it must not call the connection). Throws Error if
  // the connection is dead; a later failure shows at the next request.
  void notify(wire::Message message, std::vector<transport::Segment> payload = {},
              std::function<void(bool ok)> sent = {});

  // Answers that arrive while nobody waits for them in particular (wire::ClReply to
  // request_async, wire::ClNotice) are handed to callbacks run by whichever thread drives the
  // connection, holding it: they must not call the connection, nor block.
  //   reply: the answer, and its payload (in `reply_buffer` when one was given, else in memory of
  //   its own); nullptr when the connection failed first (`why` says why).
  using AsyncReply = std::function<void(wire::Message* reply, transport::Buffer* payload, const std::string& why)>;
  // Sends `request` (its call_id assigned here) and returns at once; `done` runs once, with its
  // answer or the connection's failure. A reply payload lands in reply_buffer (which must hold the
  // announced bytes), or, when reply_buffer is null, in a buffer made for it. A wire::ClReply with
  // lane_bytes is answered once that many bytes of wire::ReplyChunks have landed in reply_buffer.
  // Throws Error if the connection is dead (then `done` is not run).
  void request_async(wire::Message request, std::vector<transport::Segment> payload, void* reply_buffer,
                     uint64_t reply_capacity, AsyncReply done);
  // Messages the server sends unasked (wire::ClNotice); set before they can come.
  void set_notice_handler(std::function<void(const wire::Message&)> handler);
  // Drives the connection until done() (checked under the connection's lock, after every event)
  // or timeout_seconds (0: none) pass; throws Error like request(). A thread that keeps callbacks
  // coming while the program does not wait runs this; so does one waiting for an async answer.
  void wait_until(const std::function<bool()>& done, double timeout_seconds, const char* what);
  // Drives the connection for as long as it lives, for a thread that keeps callbacks coming:
  // like wait_until() for nothing, but where cores are to spare (common/spin.hpp) it stands aside
  // while another thread waits for something (wait_until, request), which then receives its own
  // answer without a hand-off between threads (2 us at the median, 8 at the 90th percentile on
  // the H200 host: remote OpenCL's clFinish, bench/results/h200/opencl). Throws Error once the
  // connection fails.
  void drive_in_background(const char* what);

  // Where a piece of a chunked call's result lands: its offset in the packed result and its size
  // give the memory to receive it into (nullptr refuses it, which fails the call).
  using ResultLanding = std::function<std::byte*(uint64_t offset, uint64_t bytes)>;
  // Readies payload bytes [begin, end) in the memory the payload's segments point at; called
  // (holding the connection) just before the chunk holding them is sent.
  using ChunkPacker = std::function<void(uint64_t begin, uint64_t end)>;

  // Sends a call whose payload is `payload` in chunks: `first` is its first chunk (a
  // wire::CallChunk, LapackChunk or FftChunk with index 0, its call_id assigned here), the others
  // are the same but for their index, `window` of them in flight at a time; those that lie in
  // resident inputs in use (wire::held_chunks) are not sent. The result arrives
  // in pieces (wire::ReplyChunk) where `land` says, reply_bytes in all. Returns the server's
  // CallReply, LapackReply or FftReply; throws like request().
  wire::Message chunked_request(wire::Message first, std::vector<transport::Segment> payload, ResultLanding land,
                                uint64_t reply_bytes, double timeout_seconds, unsigned window = kDefaultChunkWindow,
                                ChunkPacker pack = {});
  static constexpr unsigned kDefaultChunkWindow = 4;

  // Sends `count` pings of `bytes` each from `data`, keeping up to `window` in flight; returns when
  // all are answered. For throughput benchmarks; `flags` are wire::Ping's.
  // Plain streams (no flags) go into a sink the server opens for this connection (asked once),
  // with no header per message, when the server offers one that takes `bytes`.
  // With lanes the messages are dealt out over them in turn, `window` in flight on each.
  void ping_stream(const void* data, uint64_t bytes, int count, int window, uint8_t flags = 0);
  // The other direction (`bench get`): `count` answers of `bytes` each from the server's memory,
  // received into `into` (one buffer every answer overwrites), `window` asked at a time per
  // connection, over the lanes in turn as ping_stream's.
  void fill_stream(void* into, uint64_t bytes, int count, int window);
  // Whether plain streams may use the server's sink (default true); off, every message carries
  // its ping header, as before sinks. For side-by-side comparisons.
  void set_stream_sink(bool on);

  // The direct path: how many copy lanes the server offers this connection (asked once, with a
  // wire::LanesRequest, offering CMA copies if `cma`); 0 when it offers none. Throws like request().
  uint32_t direct_lanes(double timeout_seconds, bool cma = true);
  // Asks the question of direct_lanes() now without waiting for the answer (a plan whose
  // executions will take the direct path: the server sets the lanes up while the program goes
  // on, and the first execution finds them ready). Throws like request().
  void ask_direct_lanes(bool cma = true);
  // Lets the server copy to and from [data, data + bytes) on the direct path. Throws Error.
  transport::Registration register_memory(void* data, size_t bytes);
  // Sends `call` (a wire::DirectLapack, DirectBlas3, ...) and waits for its reply. A gated call:
  // once the server says it has the input (wire::InputTaken), keep() runs (the connection not
  // held), then a wire::Proceed goes out and `proceeded` is set. Throws like request(); the memory
  // the call names must stay valid and registered until it returns.
  wire::Message direct_request(wire::Message call, bool gated, const std::function<void()>& keep, bool& proceeded,
                               double timeout_seconds);

  // False once the connection failed, and in a process forked from the one that made it: a
  // child connects on its own (its UCX is a fresh instance, see transport/ucx.hpp). A child must
  // neither use nor destroy the connection it inherited (its condition variable may count the
  // parent's waiting threads, and destroying it would wait for them forever): the runtime keeps
  // it, and every method but this one refuses it with an Error.
  bool alive() const;
  const std::string& server_name() const { return server_name_; }
  // Every message of this connection is sealed (transport::Worker::protect): no copy lanes, no
  // direct path, no sink; all data travels in messages.
  bool encrypted() const { return encrypted_; }
  // The ports of the server's other processes (a worker per GPU) at this connection's host, as
  // it said when it accepted the connection.
  const std::vector<uint16_t>& siblings() const { return siblings_; }
  // When each step of connecting ended (now_ns): the transport made, the server's challenge
  // received, the session accepted (OUTBOARD_CL_TRACE's start-up line, call_trace.hpp).
  struct ConnectSteps {
    uint64_t began = 0, transport_ready = 0, challenged = 0, accepted = 0;
  };
  const ConnectSteps& connect_steps() const { return connect_steps_; }
  // The inputs the server keeps for this session, as this side knows them (resident_inputs.hpp).
  ResidentMirror& resident() { return resident_; }
  // The server's load as its last answer reported it (wire::ServerLoad): calls queued or running
  // there, and its GPUs' free memory (0: none or unknown). A count older than kLoadFreshNs reads
  // as 0: answers are the only news of a server's load, so a figure that kept a client away
  // (another session's call, since finished) would otherwise never be corrected.
  static constexpr uint64_t kLoadFreshNs = 1'000'000'000;
  uint32_t server_calls() const;
  // Whether a large call may take this server too (a block of it spread over several servers): no
  // call there, or no session there but this one (its calls are the caller's to count: a load
  // stamped on an answer counts the call answered, and a direct call twice).
  bool idle_but_for_us() const;
  uint64_t server_free_device_bytes() const { return load_free_device_.load(std::memory_order_relaxed); }
  std::string transport_description();

 private:
  struct Pending {
    bool done = false;
    wire::Message reply;
    void* reply_buffer = nullptr;
    uint64_t reply_capacity = 0;
    // Chunked calls: the result arrives in pieces beside the reply, in any order.
    bool chunked = false;
    bool replied = false;
    uint64_t received = 0;
    ResultLanding land;
    bool input_taken = false;  // direct calls: the server has copied the input
    AsyncReply on_reply;       // request_async: answered through this
    uint64_t lane_bytes = 0;   // request_async: result bytes the reply said come as pieces
  };
  // Answers a request_async whose reply (in p.reply) and pieces are all in.
  void answer_async(uint64_t id, transport::Buffer* payload);
  struct ChunkSender;
  void send_chunks(const std::shared_ptr<ChunkSender>& s);
  // send_lane_data's chunks not yet sent, and how many are in flight.
  struct LaneData;
  struct LaneChunk {
    std::shared_ptr<LaneData> of;
    uint64_t index = 0;
  };
  std::deque<LaneChunk> lane_queue_;
  uint64_t lane_in_flight_ = 0;
  void send_lane_chunks();  // under mu_
  // What is in flight, for a timeout's message: " [3 requests unanswered, ...]" or "". Under mu_.
  std::string in_flight_detail() const;
  // Wakes the threads waiting for a predicate: on the condition variable, and the one sleeping on
  // the transport's wake-up fd.
  void wake_waiters();
  void finish_if_complete(uint64_t id, Pending& p);
  using Lock = std::unique_lock<std::mutex>;

  template <class Done>
  void wait(Lock& lk, Done done, double timeout_seconds, const char* what, bool background = false);
  // Registers `p` for the answer to `request` and sends it. A request without answer passes its
  // Pending as `unanswered` instead: the send's completion marks it done (and keeps it alive).
  uint64_t post(Lock& lk, wire::Message& request, std::vector<transport::Segment> payload, Pending* p,
                std::shared_ptr<Pending> unanswered = {});
  void fail(const std::string& reason);
  bool inherited() const { return getpid() != owner_; }
  void refuse_if_inherited() const;
  wire::Message lanes_request(bool cma) const;
  static void stream_sent(void* self, bool ok);
  uint32_t stream_sink(uint64_t bytes);
  void on_message(transport::PeerId from, std::vector<std::byte> header, transport::Buffer payload, bool refused);
  std::optional<transport::Buffer> on_payload(std::span<const std::byte> header, uint64_t bytes);

  const pid_t owner_ = getpid();  // the process that connected
  std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<transport::Worker> worker_;
  transport::PeerId peer_ = 0;
  bool blocking_ = false;  // a thread sleeps in worker_->block()
  int foreground_ = 0;     // threads in wait() for something (not drive_in_background)
  bool dead_ = false;
  std::string dead_reason_;
  std::atomic<uint32_t> load_calls_{0};
  std::atomic<uint32_t> load_sessions_{0};
  std::atomic<uint64_t> load_at_ns_{0};  // when load_calls_ arrived (now_ns)
  std::atomic<uint64_t> load_free_device_{0};
  uint64_t next_call_ = 1;
  uint64_t stream_sends_ = 0;  // ping_stream's sends not yet completed
  bool streaming_ = false;     // a thread is in ping_stream
  std::array<std::byte, wire::kPingBytes> stream_header_{};  // its unanswered messages' header
  const transport::SendDone stream_done_{&Connection::stream_sent, this};
  std::unordered_map<uint64_t, Pending*> pending_;
  std::unordered_map<uint64_t, std::unique_ptr<Pending>> async_;  // request_async's, also in pending_
  std::function<void(const wire::Message&)> notice_handler_;
  bool one_sided_over_tcp() const;  // under mu_
  std::optional<uint32_t> lanes_;  // answer to the LanesRequest, once asked (0: none, or not used)
  bool ucx_over_tcp_ = false;      // set_ucx_copies_over_tcp
  std::shared_ptr<Pending> lanes_asked_;  // the LanesRequest sent by ask_direct_lanes, until answered
  std::optional<wire::SinkReply> sink_;  // answer to the SinkRequest, once asked
  bool use_sink_ = true;
  // Handshake state.
  std::optional<wire::Message> handshake_reply_;
  std::string server_name_;
  ConnectSteps connect_steps_;
  std::vector<uint16_t> siblings_;
  ResidentMirror resident_;
  uint64_t last_hold_ns_ = 0;  // when the server last said it is busy, keep waiting (wire::Hold)
  // Through the handshake: while the server's port holds the connection, the client waits up to
  // this time whatever the connect timeout (kHandshakePatience times it; 0 once authenticated).
  uint64_t patient_until_ns_ = 0;
  bool challenged_ = false;  // the server answered the hello
  bool encrypted_ = false;
  Nonce server_nonce_{};  // the handshake's: proves this process's id to the server (LanesRequest)
  // Lanes (set_link_lanes). The server's address and the proofs of each lane number (JoinSession)
  // are kept from the handshake; the secret is not.
  struct LinkLane {
    transport::PeerId peer = 0;
    bool joined = false;
  };
  ServerAddress server_;
  double connect_timeout_ = 5;
  std::vector<Mac> lane_proofs_;  // [i]: lane i + 1's; as many as the server offers lanes
  std::vector<uint16_t> lane_ports_;  // where lanes connect (wire::AuthResult::lane_ports); empty: port
  unsigned lanes_wanted_ = 1;
  bool lanes_opened_ = false;
  std::vector<LinkLane> link_lanes_;
  size_t next_bulk_ = 0;
  // Opens the lanes, once, where wanted and offered and the data crosses TCP, and waits until
  // each has joined or failed (a lane that did not join is not used).
  void open_link_lanes(Lock& lk);
  bool bulk_over_tcp() const;
  // The connections bulk data travels over now: peer_ and the joined lanes.
  std::vector<transport::PeerId> bulk_peers() const;
  transport::PeerId next_bulk_peer();
  void on_lane_event(transport::PeerId lane, const wire::Message* m, const std::string& why);
};

}  // namespace outboard::client
