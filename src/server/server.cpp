#include "server/server.hpp"

#include <spdlog/spdlog.h>
#include <spdlog/fmt/ranges.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "server/chunked.hpp"
#include "server/compute_pool.hpp"
#include "server/core.hpp"
#include "server/direct.hpp"
#include "server/identities.hpp"
#include "server/metrics.hpp"
#include "server/services/service.hpp"
#include "common/spin.hpp"
#include "transport/seal.hpp"
#include "transport/stale_socket_events.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

namespace outboard::server {
namespace {

using transport::Buffer;

// What a client says about itself (its name, the identity it names), as the server keeps it for
// its status document, metrics and logs: printable ASCII, anything else as '?'. Raw, a byte that
// is not UTF-8 made every status request fail (nlohmann::json refuses to dump it; found by
// fuzz_session), and a newline could forge log lines.
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  return out;
}

}  // namespace

struct Server::Impl final : Core {
  Config config_;
  std::vector<std::unique_ptr<Backend>> backends_;
  Backend* device_backend = nullptr;  // the first with device memory, if any (device pings)
  std::vector<std::unique_ptr<Service>> services;
  std::unordered_map<wire::Type, Service*> service_of;  // by the message types each serves
  std::unique_ptr<Identities> identities;
  std::atomic<bool> reload_requested{false};  // SIGHUP: reread the identities
  std::string server_name;
  uint64_t started_ns = now_ns();
  std::atomic<bool> stopping{false};
  std::unique_ptr<transport::Worker> worker_;
  std::unique_ptr<ComputePool> pool_;
  ResidentBudget resident_budget;  // before the sessions, whose stores give their bytes back to it
  std::unordered_map<PeerId, Session> sessions;
  std::unordered_map<PeerId, PeerId> lane_owner;  // a lane's connection -> its session's (Session::lanes)
  std::vector<uint16_t> lane_ports;  // the lane threads' (Config::lane_threads), told to every client
  // Lanes joined, and the messages they carried: arrived on one, and result pieces sent on one.
  uint64_t lanes_joined = 0, lane_messages_in = 0, lane_pieces_out = 0;
  uint64_t lanes_joined_on_threads = 0;  // of lanes_joined: through a lane thread's port
  std::map<std::string, uint64_t> calls_by_routine;
  uint64_t total_calls = 0, total_errors = 0, total_connections = 0, refused_auth = 0, total_pings = 0;
  std::mutex done_mu;  // guards `done`: filled by compute threads
  std::vector<Completion> done;
  std::atomic<bool> any_done{false};  // `done` is not empty
  ChunkedCalls chunked_{*this};
  DirectPath direct_{*this, chunked_};
  Metrics metrics_;
  int restarts = 0;  // servers before this one that ended for a GPU fault (Server::restarted)
  std::string restart_reason;
  unsigned worker_index = 0, workers = 1;  // Server::set_worker
  mutable std::mutex siblings_mu;          // guards `siblings`: set from the supervisor's thread
  std::vector<uint16_t> siblings;
  nlohmann::json transport_tables() const {
    if (!worker_) return nullptr;
    const transport::Worker::Tables t = worker_->tables();
    const auto guard = transport::stale_socket_events::counts();
    return {{"peers", t.peers},
            {"retiring", t.retiring},
            {"closes_in_flight", t.closes_in_flight},
            {"lane_events_waiting", t.lane_events_waiting},
            {"lane_commands_waiting", t.lane_commands_waiting},
            {"lane_landings_waiting", t.lane_landings_waiting},
            {"socket_handlers_guarded", guard.guarded},
            {"stale_socket_events_dropped", guard.dropped}};
  }
  std::vector<uint16_t> sibling_ports() const {
    std::lock_guard lk(siblings_mu);
    return siblings;
  }
  uint16_t port = 0;

  // ---- Core ----

  const Config& config() const override { return config_; }
  const std::vector<std::unique_ptr<Backend>>& backends() const override { return backends_; }
  transport::Worker& worker() override { return *worker_; }
  ComputePool& pool() override { return *pool_; }
  ChunkedCalls& chunked() override { return chunked_; }
  DirectPath& direct() override { return direct_; }
  ResidentStore& resident(Session& s) override {
    if (!s.resident) s.resident = std::make_unique<ResidentStore>(config_.resident_bytes, resident_budget);
    return *s.resident;
  }

  // What a lane (Session::lanes) may carry: its session's bulk data, nothing that changes its state.
  static bool lane_carries(wire::Type t) {
    return t == wire::Type::call_chunk || t == wire::Type::lapack_chunk || t == wire::Type::fft_chunk ||
           t == wire::Type::cl_chunk || t == wire::Type::ping;
  }

  // A lane's messages are its session's.
  Session* session(PeerId p) override {
    auto it = sessions.find(p);
    if (it != sessions.end()) return &it->second;
    auto lane = lane_owner.find(p);
    if (lane == lane_owner.end()) return nullptr;
    it = sessions.find(lane->second);
    return it == sessions.end() ? nullptr : &it->second;
  }

  PeerId bulk_peer(Session& s) override {
    // Lanes on lane threads carry it all: the session's own connection is this thread's, which
    // runs every session's calls besides.
    const bool own = s.lanes.empty() || !transport::Worker::is_lane(s.lanes.front());
    const size_t i = s.next_bulk++ % (s.lanes.size() + (own ? 1 : 0));
    if (own && i == 0) return s.peer;
    ++lane_pieces_out;
    return s.lanes[own ? i - 1 : i];
  }

  void send(PeerId peer, const wire::Message& m) override { worker_->send(peer, encode_with_load(m), {}, nullptr); }

  // ---- load, as answers carry it (wire/load.hpp) ----

  uint32_t ready_sessions = 0;
  uint64_t total_holds = 0;
  uint64_t free_device_bytes = 0;  // sampled by housekeeping: asking the GPUs is no work for every reply
  uint64_t housekeeping_rounds = 0;

  wire::ServerLoad load() const {
    const size_t calls = pool_->busy() + chunked_.active();
    return {static_cast<uint32_t>(std::min<size_t>(calls, UINT32_MAX)), ready_sessions, free_device_bytes};
  }
  // The message encoded, with the load filled in where it carries one.
  std::vector<std::byte> encode_with_load(const wire::Message& m) const {
    return std::visit(
        [&](const auto& x) {
          if constexpr (requires { x.load; }) {
            auto stamped = x;
            stamped.load = load();
            return wire::encode(wire::Message(std::move(stamped)));
          } else {
            return wire::encode(m);
          }
        },
        m);
  }

  // Tells the peer why, then closes the connection once the message is out.
  void reject(PeerId peer, const std::string& why) override {
    Session* s = session(peer);
    if (!s || s->state == State::closing) return;
    spdlog::warn("session.reject peer={} addr={} client=\"{}\" reason=\"{}\"", s->peer, s->addr, s->client_name, why);
    send(s->peer, wire::ErrorMessage{why});
    close_soon(*s);
  }

  void check_limits(const Session& s, uint64_t total) const override {
    if (total > config_.max_request_bytes)
      throw ProtocolError("call needs " + std::to_string(total) + " bytes, above this server's max_request_bytes (" +
                          std::to_string(config_.max_request_bytes) + ")");
    if (s.held_bytes + total > config_.max_client_bytes)
      throw ProtocolError("client holds too much memory on this server (max_client_bytes)");
    if (config_.identity_max_bytes && identity_total(s, &Session::held_bytes) + total > config_.identity_max_bytes)
      throw ProtocolError("identity '" + s.identity + "' holds too much memory on this server (identity_max_bytes " +
                          std::to_string(config_.identity_max_bytes) + ")");
  }

  void admit_call(Session& s) override {
    if (config_.identity_max_calls && identity_total(s, &Session::calls_in_flight) >= config_.identity_max_calls)
      throw ProtocolError("identity '" + s.identity + "' has " + std::to_string(config_.identity_max_calls) +
                          " calls in flight on this server (identity_max_calls)");
    ++s.calls_in_flight;
  }

  // A counter summed over the sessions of `s`'s identity.
  template <class T>
  uint64_t identity_total(const Session& s, T Session::*field) const {
    uint64_t sum = 0;
    for (const auto& [_, other] : sessions)
      if (other.state == State::ready && other.identity == s.identity) sum += other.*field;
    return sum;
  }

  void count_call(Session* s, PeerId peer, uint64_t call_id, const std::string& routine, bool ok,
                  const std::string& error) override {
    ++total_calls;
    ++calls_by_routine[routine];
    metrics_.call_counted(s, call_id, ok);
    if (!ok) {
      ++total_errors;
      spdlog::warn("call.failed peer={} call={} routine={} error=\"{}\"", peer, call_id, routine, error);
    }
    if (s) {
      ++s->calls;
      if (!ok) ++s->errors;
      if (s->calls_in_flight) --s->calls_in_flight;
    }
  }

  void complete(Completion c) override {
    {
      std::lock_guard lk(done_mu);
      done.push_back(std::move(c));
      any_done.store(true, std::memory_order_release);
    }
    worker_->signal();
  }

  // ---- sessions ----

  // Hangs up a little later: closing right away races the last message, which the peer might
  // then never see. A polite peer hangs up first.
  void close_soon(Session& s) {
    if (s.state == State::ready && ready_sessions) --ready_sessions;
    s.state = State::closing;
    s.close_at_ns = now_ns() + kCloseGraceNs;
  }
  static constexpr uint64_t kCloseGraceNs = 1'000'000'000;
  // How often a handshake that waits its turn is told to hold on (wire::Hold): well within the
  // clients' default connect timeout (5 s), which a Hold renews.
  static constexpr uint64_t kHoldEveryNs = 1'000'000'000;
  // How many auth timeouts a client has, in a storm, from its connection to its proof.
  static constexpr uint64_t kAuthPatience = 6;
  static constexpr uint32_t kStormHandshakes = 32;
  // The transport's receive probe (transport.hpp, Worker::receiving): one a second while clients
  // are connected and for kProbeAfterClientsNs after the last left (a client killed while writing
  // a message stalls the queue as it goes; an idle server sends none). One that has not arrived
  // after kReceivePatienceSeconds of progress means the queue is stalled for good.
  static constexpr double kProbeIntervalSeconds = 1.0;
  static constexpr double kReceivePatienceSeconds = 5.0;
  static constexpr uint64_t kProbeAfterClientsNs = 10'000'000'000;
  uint64_t probe_until_ns = 0;
  std::function<void(const std::string&)> on_transport_lost;
  bool transport_lost = false;

  // A graceful close, so the last message still reaches the peer.
  void close(PeerId peer) {
    if (!sessions.count(peer)) return;
    worker_->close(peer, false);
    end_session(peer, "closed by server");
  }

  void end_session(PeerId peer, const std::string& why) {
    auto it = sessions.find(peer);
    if (it == sessions.end()) {
      auto lane = lane_owner.find(peer);  // a lane gone: what it carried is lost with it
      if (lane == lane_owner.end()) return;
      const PeerId owner = lane->second;
      lane_owner.erase(lane);
      worker_->close(owner, true);
      return end_session(owner, "a lane of the session failed: " + why);
    }
    const Session& s = it->second;
    for (PeerId lane : s.lanes) {
      lane_owner.erase(lane);
      worker_->close(lane, true);
    }
    if (s.state == State::ready && ready_sessions) --ready_sessions;
    chunked_.session_ended(s);  // their pipelines finish with the session
    direct_.session_ended(s);
    for (auto& service : services) service->on_session_end(peer);
    metrics_.session_ended(s);
    if (why.rfind("encrypted session: ", 0) == 0)  // the transport could not open a sealed message
      spdlog::error("session.seal_failed peer={} addr={} identity={} client=\"{}\" reason=\"{}\"", peer, s.addr,
                    s.identity, s.client_name, why);
    spdlog::info("session.end peer={} addr={} identity={} client=\"{}\" calls={} bytes_in={} bytes_out={} reason=\"{}\"",
                 peer, s.addr, s.identity, s.client_name, s.calls, s.bytes_in, s.bytes_out, why);
    sessions.erase(it);
  }

  void on_connect(PeerId peer, const std::string& addr) {
    ++total_connections;
    Session& s = sessions[peer];
    s.peer = peer;
    s.addr = addr;
    spdlog::info("session.start peer={} addr={}", peer, addr);
    // Connections still authenticating have a bound of their own, so that a storm of clients
    // starting at once is held (wire::Hold) rather than refused; sessions are bounded at the end
    // of their handshake (on_auth).
    if (sessions.size() - ready_sessions > config_.max_clients)
      reject(peer, "server is setting up its maximum number of connections (max_clients)");
  }

  void count_ping(Session& s, uint64_t bytes) {
    ++s.pings;
    s.ping_bytes += bytes;
    ++total_pings;
  }

  Service* service_for(const wire::Message& m) const {
    auto it = service_of.find(wire::type_of(m));
    return it == service_of.end() ? nullptr : it->second;
  }

  // Decides where a message's payload lands: checked against the session's state and limits
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
      if (peer != s->peer && !ping && !lane_carries(wire::type_of(*m)))
        throw ProtocolError("a lane carries only chunks and pings");
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
      if (const auto* e = std::get_if<wire::Enveloped>(&*m)) {  // landed whole; on_enveloped takes it apart
        if (peer != s->peer) throw ProtocolError("a lane carries only chunks and pings");
        if (e->header_bytes + e->payload_bytes != bytes) throw ProtocolError("an envelope of another size than it announced");
        check_limits(*s, bytes);
        return transport::Landing::receive(Buffer::allocate(bytes));
      }
      Service* service = service_for(*m);
      if (!service) throw ProtocolError("this message carries no payload");
      return service->on_payload(*s, *m, bytes);
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
    if (s.encrypted)  // a sink's messages carry no header to seal
      return send(s.peer, wire::SinkReply{q.call_id, 0, 0, "no sink for an encrypted session"});
    try {
      send(s.peer, wire::SinkReply{q.call_id, worker_->open_sink(s.peer), config_.max_request_bytes, ""});
    } catch (const Error& e) {
      send(s.peer, wire::SinkReply{q.call_id, 0, 0, e.what()});
    }
  }

  // Whatever goes wrong while handling one peer's message ends that peer's session, not the server.
  void on_message(PeerId peer, std::vector<std::byte> header, Buffer payload, bool refused) {
    try {
      handle_message(peer, std::move(header), std::move(payload), refused);
    } catch (const std::exception& e) {
      reject(peer, std::string("server error: ") + e.what());
    }
  }

  // A message that came Enveloped (wire::Enveloped), handled as if it had come as usual: its
  // payload lands where on_payload decides for it, then the message is handled.
  void on_enveloped(PeerId peer, const wire::Enveloped& e, Buffer payload) {
    if (payload.size() != e.header_bytes + e.payload_bytes)
      return reject(peer, "an enveloped message without the data it announced");
    std::vector<std::byte> header(payload.data(), payload.data() + e.header_bytes);
    if (std::holds_alternative<wire::Enveloped>(wire::decode(header)))  // a malformed one throws: rejected
      return reject(peer, "an envelope inside an envelope");
    Buffer inner;
    bool refused = false;
    if (e.payload_bytes) {
      transport::Landing landing = on_payload(peer, header, e.payload_bytes);
      if (landing.action() == transport::Landing::Action::discard) return;
      refused = landing.action() == transport::Landing::Action::refuse;
      if (!refused) {
        inner = std::move(landing.buffer());
        if (inner.size() < e.payload_bytes) return reject(peer, "no room for an enveloped message's payload");
        std::memcpy(inner.data(), payload.data() + e.header_bytes, e.payload_bytes);
      }
    }
    handle_message(peer, std::move(header), std::move(inner), refused);
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
    if (peer != s->peer) {  // a lane: its session's chunks and benchmark pings, nothing else
      ++lane_messages_in;
      if (!lane_carries(wire::type_of(m))) return reject(peer, "a lane carries only chunks and pings");
    }
    switch (s->state) {
      case State::awaiting_hello:
        if (auto* h = std::get_if<wire::Hello>(&m)) {
          if (transport::Worker::is_lane(peer))  // a lane thread's port: sessions begin on `port`
            return reject(peer, "this port takes lanes only (a session begins on port " + std::to_string(port) + ")");
          return on_hello(*s, *h);
        }
        if (auto* j = std::get_if<wire::JoinSession>(&m)) return on_join(peer, *j);
        return reject(peer, "expected hello");
      case State::awaiting_auth:
        if (auto* a = std::get_if<wire::Auth>(&m)) return on_auth(*s, *a);
        return reject(peer, "expected authentication");
      case State::ready:
        if (Service* service = service_for(m)) {
          metrics_.request(*s, service->name(), m);
          return service->on_message(*s, m, std::move(payload));
        }
        if (auto* p = std::get_if<wire::Ping>(&m)) return on_ping(*s, peer, *p, std::move(payload));
        if (auto* e = std::get_if<wire::Enveloped>(&m)) return on_enveloped(peer, *e, std::move(payload));
        if (auto* q = std::get_if<wire::LanesRequest>(&m)) return direct_.on_lanes(*s, *q);
        if (auto* q = std::get_if<wire::SinkRequest>(&m)) return on_sink_request(*s, *q);
        if (auto* q = std::get_if<wire::Proceed>(&m)) return direct_.on_proceed(*s, *q);
        if (auto* q = std::get_if<wire::StatusRequest>(&m))
          return send(peer, wire::StatusReply{q->call_id, status().dump()});
        return reject(peer, "unexpected message");
      default:
        return;
    }
  }

  void on_hello(Session& s, const wire::Hello& h) {
    s.client_name = printable(h.client_name);
    s.client_nonce = h.client_nonce;
    s.wants_encryption = h.encrypt;
    s.server_nonce = random_nonce();
    s.state = State::awaiting_auth;
    s.handshake_step_ns = s.last_hold_ns = now_ns();
    s.identity = h.identity.empty() ? Identities::kDefault : printable(h.identity);  // a valid name is printable
    // An unknown identity is answered as a wrong secret would be: a challenge nobody can meet
    // (a refusal at once would tell a stranger which identities exist).
    std::optional<Secret> secret = valid_identity_name(s.identity) ? identities->secret(s.identity) : std::nullopt;
    s.identity_known = secret.has_value();
    const Secret key = secret ? *secret : random_nonce();  // the same 32 random bytes
    send(s.peer, wire::Challenge{s.server_nonce, wire::server_proof(key, s.client_nonce, s.server_nonce), server_name,
                                 config_.encrypt});
  }

  void on_auth(Session& s, const wire::Auth& a) {
    std::optional<Secret> secret = s.identity_known ? identities->secret(s.identity) : std::nullopt;
    const std::string host = s.addr.substr(0, s.addr.rfind(':'));
    if (!secret || !macs_equal(a.client_proof, wire::client_proof(*secret, s.server_nonce, s.client_nonce))) {
      ++refused_auth;
      // Held back, longer with each failure from the address: guessing a secret is slowed down.
      const uint64_t delay = identities->refusal_delay_ns(host);
      spdlog::warn("session.auth_refused peer={} addr={} identity={} client=\"{}\" delay_ms={}", s.peer, s.addr,
                   s.identity, s.client_name, delay / 1'000'000);
      s.refusal_to_send = "authentication refused: the client's secret does not match this server's secret of identity '" +
                          s.identity + "' (or the server has no such identity)";
      s.state = State::closing;
      s.close_at_ns = now_ns() + delay;
      return;
    }
    // Encryption: both sides insist on their own setting, so a session is encrypted exactly when
    // both ask; a mismatch is refused, with the fix, on both sides. After the proof: the answer
    // goes only to a client that knows the secret.
    if (config_.encrypt != s.wants_encryption) {
      const std::string why = config_.encrypt ? "server requires encryption: set OUTBOARD_ENCRYPT=1"
                                              : "client requires encryption; server " + server_name +
                                                    " does not offer it (its configuration has encrypt = false)";
      spdlog::warn("session.refused peer={} addr={} identity={} client=\"{}\" reason=\"{}\"", s.peer, s.addr,
                   s.identity, s.client_name, why);
      send(s.peer, wire::AuthResult{false, why});
      close_soon(s);
      return;
    }
    if (config_.identity_max_sessions) {
      size_t open = 0;
      for (const auto& [_, other] : sessions) open += other.state == State::ready && other.identity == s.identity;
      if (open >= config_.identity_max_sessions) {
        spdlog::warn("session.refused peer={} addr={} identity={} reason=identity_max_sessions", s.peer, s.addr, s.identity);
        send(s.peer, wire::AuthResult{false, "identity '" + s.identity + "' already has " +
                                                 std::to_string(config_.identity_max_sessions) +
                                                 " sessions on this server (identity_max_sessions)"});
        close_soon(s);
        return;
      }
    }
    if (ready_sessions >= config_.max_clients) {
      spdlog::warn("session.refused peer={} addr={} identity={} reason=max_clients", s.peer, s.addr, s.identity);
      send(s.peer, wire::AuthResult{false, "server is serving its maximum number of clients (max_clients)"});
      close_soon(s);
      return;
    }
    identities->succeeded(host);
    s.authenticated = true;
    s.state = State::ready;
    ++ready_sessions;
    spdlog::info("session.authenticated peer={} addr={} identity={} client=\"{}\" encrypted={}", s.peer, s.addr,
                 s.identity, s.client_name, config_.encrypt);
    // Lanes carry no seals: an encrypted session has its one connection.
    send(s.peer, wire::AuthResult{true, "welcome", {}, config_.encrypt, sibling_ports(),
                                  std::min(config_.resident_bytes, config_.resident_total_bytes),
                                  config_.encrypt ? 1u : config_.lanes,
                                  config_.encrypt ? std::vector<uint16_t>{} : lane_ports});
    if (config_.encrypt) {
      // Both proofs verified: the keys now. The answer above left in plaintext; from here on
      // everything either way is sealed (the client switches when it reads that answer).
      SessionKeys k = session_keys(*secret, s.client_nonce, s.server_nonce);
      worker_->protect(s.peer, transport::SealKeys{k.server_to_client, k.client_to_server});
      s.encrypted = true;
    }
  }

  // A new connection asks to be a lane of a ready session. Refused: told why, then closed; a
  // wrong proof is held back like a failed authentication.
  void on_join(PeerId peer, const wire::JoinSession& j) {
    Session& provisional = sessions.at(peer);
    auto refuse = [&](const std::string& why, bool delayed) {
      spdlog::warn("session.join_refused peer={} addr={} lane={} reason=\"{}\"", peer, provisional.addr, j.lane, why);
      provisional.state = State::closing;
      if (delayed) {
        ++refused_auth;
        const std::string host = provisional.addr.substr(0, provisional.addr.rfind(':'));
        provisional.close_at_ns = now_ns() + identities->refusal_delay_ns(host);
        provisional.refusal_to_send = "lane refused: " + why;
        provisional.refusal_is_join = true;
        return;
      }
      send(peer, wire::SessionJoined{false, "lane refused: " + why});
      provisional.close_at_ns = now_ns() + kCloseGraceNs;
    };
    Session* owner = nullptr;
    for (auto& [p, s] : sessions)
      if (p != peer && s.state == State::ready && macs_equal(s.server_nonce, j.server_nonce)) owner = &s;
    if (!owner) return refuse("no such session here", true);
    std::optional<Secret> secret = identities->secret(owner->identity);
    if (!secret || !macs_equal(j.proof, wire::lane_proof(*secret, owner->server_nonce, owner->client_nonce, j.lane)))
      return refuse("the proof does not match the session", true);
    if (owner->encrypted) return refuse("an encrypted session has no lanes", false);
    if (j.lane >= config_.lanes)
      return refuse("lane " + std::to_string(j.lane) + " is beyond the " + std::to_string(config_.lanes) +
                        " connections a session may have here (lanes)",
                    false);
    if (owner->lanes_joined & (1ull << j.lane)) return refuse("lane " + std::to_string(j.lane) + " has joined already", false);
    owner->lanes_joined |= 1ull << j.lane;
    owner->lanes.push_back(peer);
    lane_owner[peer] = owner->peer;
    ++lanes_joined;
    if (transport::Worker::is_lane(peer)) ++lanes_joined_on_threads;
    spdlog::info("session.lane_joined peer={} lane_peer={} lane={} addr={}", owner->peer, peer, j.lane, provisional.addr);
    sessions.erase(peer);  // the connection is the session's now (it never was one of its own)
    send(peer, wire::SessionJoined{true, "joined"});
  }

  // SIGHUP: the identities are read again; sessions of one that is gone (or got a new secret) end.
  void reload_identities() {
    std::string error;
    std::vector<std::string> gone = identities->reload(error);
    if (!error.empty()) {
      spdlog::error("serve.reload_failed error=\"{}\" (the identities stay as they were)", error);
      return;
    }
    spdlog::info("serve.reloaded identities={} revoked={}", identities->size(), gone.size());
    std::vector<PeerId> revoked;
    for (const auto& [peer, s] : sessions)
      if (std::find(gone.begin(), gone.end(), s.identity) != gone.end() && s.state != State::closing) revoked.push_back(peer);
    for (PeerId p : revoked) reject(p, "identity '" + session(p)->identity + "' was revoked on this server");
  }

  // Benchmark traffic: the payload is dropped, or sent back (echo).
  void on_ping(Session& s, PeerId from, const wire::Ping& p, Buffer payload) {
    if (p.flags & wire::Ping::fill) return on_fill_ping(s, from, p, payload);
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
      pool_->submit([this, in, back, peer, id] {
        try {
          uint64_t ns = in->size() ? device_backend->device_round_trip(in->data(), back ? back->data() : nullptr, in->size()) : 0;
          uint64_t n = back ? back->size() : 0;
          complete({peer, wire::Pong{id, n, ns}, back, 0, n});
        } catch (const std::exception& e) {
          complete({peer, wire::CallReply{id, false, e.what()}, nullptr, 0, 0});
        }
      });
      return;
    }
    if (p.flags & wire::Ping::no_reply) return;
    if (!echo) return send(from, wire::Pong{p.call_id});
    auto buf = std::make_shared<Buffer>(std::move(payload));
    std::vector<transport::Segment> out;
    if (buf->size()) out.push_back({buf->data(), buf->size()});
    worker_->send(from, encode_with_load(wire::Pong{p.call_id, buf->size()}), std::move(out), [buf](bool) {});
  }

  // `bench get`: payload_bytes of the server's own answered, on the connection the ask came on,
  // from one block of memory that every such answer reads (its contents are not the point).
  std::shared_ptr<Buffer> fill_source;
  void on_fill_ping(Session& s, PeerId from, const wire::Ping& p, const Buffer& payload) {
    if (payload.size()) return reject(s.peer, "a fill ping carries no payload");
    try {
      check_limits(s, p.payload_bytes);
    } catch (const std::exception& e) {
      return reject(s.peer, std::string("request refused: ") + e.what());
    }
    if (!fill_source || fill_source->size() < p.payload_bytes) {
      auto bigger = std::make_shared<Buffer>(Buffer::allocate(p.payload_bytes));
      std::memset(bigger->data(), 0x5a, bigger->size());
      fill_source = std::move(bigger);
    }
    count_ping(s, p.payload_bytes);
    const transport::Segment out{fill_source->data(), p.payload_bytes};
    worker_->send(from, encode_with_load(wire::Pong{p.call_id, p.payload_bytes}),
                  std::span<const transport::Segment>(&out, p.payload_bytes ? 1 : 0), [source = fill_source](bool) {});
  }

  nlohmann::json status() const;

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
      if (s && s->state != State::closing) metrics_.replied(*s, d.reply, d.bytes);
      if (!d.routine.empty()) count_call(s, d.peer, d.call_id, d.routine, d.ok, d.error);
      if (!s || s->state == State::closing) {  // the client left; its result is dropped
        if (d.sent) d.sent(false);
        continue;
      }
      if (d.bulk) {
        send_bulk(*s, d);
        continue;
      }
      for (KeptInput& k : d.keep_inputs) resident(*s).keep(std::move(k));
      if (d.result_bytes_not_sent) ++resident_budget.results_not_sent, resident_budget.result_bytes_not_sent += d.result_bytes_not_sent;
      std::vector<transport::Segment> out;
      s->bytes_out += d.bytes;
      if (d.pieces_over_lanes) send_pieces(*s, d);
      else if (d.bytes) out.push_back({d.buffer->data() + d.offset, d.bytes});
      PeerId peer = d.peer;
      auto buf = d.held ? d.buffer : nullptr;
      auto keep = d.held ? nullptr : d.buffer;  // sent from it, not counted
      worker_->send(peer, encode_with_load(d.reply), std::move(out), [this, peer, buf, keep](bool) {
        (void)keep;
        Session* s2 = session(peer);
        if (s2 && buf) s2->held_bytes -= std::min(s2->held_bytes, uint64_t(buf->size()));  // pings hold none
      });
      if (d.handed) d.handed();
    }
  }

  // A completion's message and payload on the session's next bulk connection.
  void send_bulk(Session& s, Completion& d) {
    s.bytes_out += d.bytes;
    const transport::Segment piece{d.buffer ? d.buffer->data() + d.offset : nullptr, d.bytes};
    worker_->send(bulk_peer(s), wire::encode(d.reply), std::span<const transport::Segment>(&piece, d.bytes ? 1 : 0),
                  [keep = d.buffer, sent = std::move(d.sent)](bool ok) {
                    (void)keep;  // sent from it
                    if (sent) sent(ok);
                  });
  }

  // A completion's payload as ReplyChunks over the session's lanes, in pieces dealt out to them in
  // turn (the buffer kept until every piece is sent).
  static constexpr uint64_t kLanePieceBytes = 4 << 20;
  void send_pieces(Session& s, const Completion& d) {
    const auto* reply = std::get_if<wire::ClReply>(&d.reply);
    const uint64_t id = reply ? reply->call_id : d.call_id;
    for (uint64_t at = 0; at < d.bytes; at += kLanePieceBytes) {
      const uint64_t n = std::min(kLanePieceBytes, d.bytes - at);
      const transport::Segment piece{d.buffer->data() + d.offset + at, n};
      worker_->send(bulk_peer(s), wire::encode(wire::ReplyChunk{id, at, n}), {&piece, 1},
                    [keep = d.buffer](bool) { (void)keep; });
    }
  }

  // One pass of the progress loop's work: transport events, finished calls and copies, pipelines.
  // Returns whether anything happened.
  bool poll_once() {
    bool busy = worker_->progress();
    deliver_completions();
    direct_.deliver();
    if (chunked_.active() && chunked_.progress(sessions)) busy = true;  // a device's copies signal nobody: keep looking
    return busy;
  }

  // Nothing more arrives once the transport's receive queue is stalled: no client is served and
  // no new one authenticates, in this process, ever. The server says so and, where it is given
  // a way (on_transport_lost: serve starts it again in a new process), ends.
  void watch_receiving(uint64_t now) {
    if (transport_lost) return;
    if (!sessions.empty()) probe_until_ns = now + kProbeAfterClientsNs;
    if (worker_->receiving(kProbeIntervalSeconds, kReceivePatienceSeconds, now < probe_until_ns)) return;
    transport_lost = true;
    const std::string why = "transport receives nothing: a probe of its own waited " +
                            std::to_string(int(kReceivePatienceSeconds)) +
                            " s (a local client killed while writing into the shared-memory queue stalls it for good)";
    spdlog::error("transport.receive_stalled sessions={} error=\"{}\"", sessions.size(), why);
    if (on_transport_lost) {
      on_transport_lost(why);
      stopping.store(true);
    }
  }

  // Rejects connections that did not authenticate in time; hangs up on those being closed.
  void housekeeping() {
    const uint64_t limit = static_cast<uint64_t>(config_.auth_timeout_seconds * 1e9);
    const uint64_t now = now_ns();
    std::vector<PeerId> late, done;
    uint32_t handshaking = 0;
    for (const auto& [peer, s] : sessions)
      handshaking += s.state == State::awaiting_hello || s.state == State::awaiting_auth;
    // In a storm (kStormHandshakes or more in flight) the clients starting share the cores with
    // each other and with the server: a client's next step may be late for that alone, also after
    // the rest have finished. A handshake that saw one is given up to kAuthPatience times the
    // timeout from its connection, never more; the number of connections still authenticating has
    // its own bound (on_connect). A few at once are no storm: a stuck client beside another
    // connecting must still be closed in time (bad_requests' stuck client was kept otherwise).
    const bool storm = handshaking >= kStormHandshakes;
    for (auto& [peer, s] : sessions) {
      const bool in_handshake = s.state == State::awaiting_hello || s.state == State::awaiting_auth;
      s.handshake_in_storm |= in_handshake && storm;
      if (in_handshake && now - s.handshake_step_ns > limit &&
          !(s.handshake_in_storm && now - s.connected_ns < kAuthPatience * limit))
        late.push_back(peer);
      // A handshake that waits its turn: the client hears the server is alive, and keeps waiting.
      // The first after half the interval, then every interval.
      const uint64_t hold_after = s.last_hold_ns == s.handshake_step_ns ? kHoldEveryNs / 2 : kHoldEveryNs;
      if (in_handshake && now - s.last_hold_ns > hold_after) {
        send(peer, wire::Hold{handshaking});
        s.last_hold_ns = now;
        ++total_holds;
      }
      if (s.state == State::closing && now >= s.close_at_ns) done.push_back(peer);
    }
    for (PeerId p : late)
      reject(p, sessions.at(p).state == State::awaiting_hello ? "authentication not completed in time (no hello came)"
                                                              : "authentication not completed in time (no proof came)");
    if (++housekeeping_rounds % 10 == 1) {  // once a second: a driver call may wait on a lock
      uint64_t free = 0;
      for (const auto& b : backends_) free += b->free_device_bytes();
      free_device_bytes = free;
    }
    for (PeerId p : done) {
      Session& s = sessions.at(p);
      if (!s.refusal_to_send.empty()) {  // a held-back refusal: sent now, the hang-up a little later
        if (s.refusal_is_join)
          send(p, wire::SessionJoined{false, std::exchange(s.refusal_to_send, {})});
        else
          send(p, wire::AuthResult{false, std::exchange(s.refusal_to_send, {})});
        s.close_at_ns = now + kCloseGraceNs;
        continue;
      }
      close(p);
    }
    std::vector<DeviceHealth> gpus;
    for (const auto& b : backends_)
      if (b->has_device_memory()) {
        const Backend::Health h = b->health();
        gpus.push_back({static_cast<int>(gpus.size()), h.in_service, h.faults, h.recoveries});
      }
    watch_receiving(now);
    const transport::Worker::Tables t = worker_->tables();
    metrics_.publish(sessions, total_connections, refused_auth, gpus, {t.peers, t.retiring, t.closes_in_flight});
  }
};

Server::Server(Config config, std::vector<std::unique_ptr<Backend>> backends) : impl_(std::make_unique<Impl>()) {
  validate(config);
  if (backends.empty()) throw Error("no backend available");
  Impl& m = *impl_;
  m.config_ = std::move(config);
  m.backends_ = std::move(backends);
  m.resident_budget.limit = m.config_.resident_total_bytes;
  for (auto& b : m.backends_)
    if (!m.device_backend && b->has_device_memory()) m.device_backend = b.get();
  m.services = make_services(m);
  for (auto& service : m.services)
    for (wire::Type t : service->messages())
      if (!m.service_of.emplace(t, service.get()).second)
        throw Error("two services serve message type " + std::to_string(static_cast<int>(t)));
  m.identities = std::make_unique<Identities>(m.config_);
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  m.server_name = host;
}

Server::~Server() {
  Impl& m = *impl_;
  // Whatever may signal the worker ends before it goes (Worker::signal on a worker gone: a
  // crash; the churn soak's restarts stopped servers under load). First the copies in flight,
  // also where an OpenCL session's threads still hold the lanes.
  m.direct_.stop_lanes();
  m.direct_.close();
  if (m.worker_) {
    // Then every session, as if its client had left: its pipelines finish (a device's copies
    // wake the worker), and each service lets go of it (OpenCL: its runner thread stops).
    std::vector<PeerId> peers;
    for (const auto& [peer, s] : m.sessions) peers.push_back(peer);
    for (PeerId p : peers) m.end_session(p, "server stopping");
  }
  m.pool_.reset();  // running calls finish (their jobs use the services)
  // Then the services, whose own threads complete their last commands (OpenCL runners, joined here).
  m.service_of.clear();
  m.services.clear();
  m.worker_.reset();
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
  uint64_t cache = m.config_.buffer_cache_bytes;
  if (cache == 0) cache = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE)) / 8;
  Buffer::set_cache_limit(cache);
  m.metrics_.serve(m.config_.metrics_host, m.config_.metrics_port);  // before the listener: a bad port fails first
  transport::Options options;
  options.log_busy_without_work = true;
  m.worker_ = std::make_unique<transport::Worker>(std::move(ev), options);
  m.port = m.worker_->listen(m.config_.host, m.config_.port);
  // Lanes carry no seals: an encrypted server has no use for lane threads.
  if (m.config_.lanes > 1 && m.config_.lane_threads > 0 && !m.config_.encrypt)
    m.lane_ports = m.worker_->listen_lanes(m.config_.host, m.config_.lane_threads, m.config_.lane_port);
  m.pool_ = std::make_unique<ComputePool>(m.config_.compute_threads);
  m.direct_.open(m.config_.copy_lanes);
  std::string names;
  for (auto& b : m.backends_) names += (names.empty() ? "" : ",") + b->name();
  spdlog::info("serve.listen addr={}:{} backends={} compute_threads={} copy_lanes={} lane_ports={}", m.config_.host,
               m.port, names, m.config_.compute_threads, m.direct_.lanes(), fmt::join(m.lane_ports, ","));
  return m.port;
}

void Server::run() {
  Impl& m = *impl_;
  uint64_t last_housekeeping = now_ns();
  uint64_t last_activity = now_ns();
  while (!m.stopping.load()) {
    if (m.reload_requested.exchange(false)) m.reload_identities();
    const bool busy = m.poll_once();
    uint64_t now = now_ns();
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
      m.worker_->wait(100);
    else if (!busy && now - last_activity < m.config_.idle_spin_ns)
      pause_core(16);
    else if (!busy)
      sched_yield();
  }
  // What this server did, final (nothing is served after the loop): for whoever restarts it.
  nlohmann::json served = m.calls_by_routine;
  if (const nlohmann::json doc = m.status(); doc.contains("opencl"))
    served["opencl_kernels"] = doc["opencl"].value("kernels", uint64_t(0));  // enqueues, as the status counts them
  spdlog::info("serve.stopping sessions={} calls={} errors={} calls_by_routine={}", m.sessions.size(), m.total_calls,
               m.total_errors, served.dump());
}

void Server::reload() {
  impl_->reload_requested.store(true);
  if (impl_->worker_) impl_->worker_->signal();
}

void Server::restarted(int count, const std::string& reason) {
  impl_->restarts = count;
  impl_->restart_reason = reason;
  impl_->metrics_.set_restarts(static_cast<uint64_t>(count));
}

void Server::on_transport_lost(std::function<void(const std::string& why)> lost) {
  impl_->on_transport_lost = std::move(lost);
}

void Server::set_worker(unsigned index, unsigned count) {
  impl_->worker_index = index;
  impl_->workers = count;
}

void Server::set_siblings(std::vector<uint16_t> ports) {
  std::erase(ports, impl_->port);
  if (ports.size() > wire::kMaxSiblings) ports.resize(wire::kMaxSiblings);
  std::lock_guard lk(impl_->siblings_mu);
  impl_->siblings = std::move(ports);
}

void Server::stop() {
  impl_->stopping.store(true);
  if (impl_->worker_) impl_->worker_->signal();
}

bool Server::poll() {
  // The pool is asked first: a call it finishes meanwhile has queued its completion before it
  // stops counting as busy, so poll_once() delivers it. Asked after, a call finishing between the
  // two left its reply undelivered with nothing said busy (fuzz_session saw answers go missing).
  const bool computing = impl_->pool_->busy() > 0;
  return impl_->poll_once() || computing;
}

nlohmann::json Server::status() const { return impl_->status(); }

nlohmann::json Server::Impl::status() const {
  const Impl& m = *this;
  uint64_t held = 0;
  for (const auto& [peer, s] : m.sessions) held += s.held_bytes;
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& b : m.backends_) backends.push_back(b->describe());
  nlohmann::json doc = {{"version", OUTBOARD_VERSION},
                        {"server", m.server_name},
                        {"listen", m.config_.host + ":" + std::to_string(m.port)},
                        {"pid", static_cast<int64_t>(getpid())},  // a monitor on this host reads /proc/<pid>
                        {"restarts", {{"count", m.restarts}, {"last_reason", m.restart_reason}}},
                        {"worker", {{"index", m.worker_index}, {"of", m.workers}, {"sibling_ports", m.sibling_ports()}}},
                        {"uptime_seconds", (now_ns() - m.started_ns) / 1e9},
                        {"backends", backends},
                        {"calls", m.total_calls},
                        {"pipelined_calls", m.chunked_.pipelined_calls()},
                        {"direct_calls", m.direct_.calls()},
                        {"lanes", {{"offered", m.config_.encrypt ? 1u : m.config_.lanes},
                                   {"threads", m.lane_ports.size()},
                                   {"ports", m.lane_ports},
                                   {"joined", m.lanes_joined},
                                   {"joined_on_threads", m.lanes_joined_on_threads},
                                   {"open", m.lane_owner.size()},
                                   {"messages_in", m.lane_messages_in},
                                   {"pieces_out", m.lane_pieces_out}}},
                        {"errors", m.total_errors},
                        {"calls_by_routine", m.calls_by_routine},
                        {"connections", m.total_connections},
                        {"refused_authentications", m.refused_auth},
                        {"encrypt", m.config_.encrypt},
                        {"load", {{"calls", m.load().calls}, {"sessions", m.ready_sessions}, {"free_device_bytes", m.free_device_bytes}}},
                        {"pings", m.total_pings},
                        {"handshake_holds", m.total_holds},  // wire::Hold sent to handshakes waiting their turn
                        {"transport", m.transport_tables()},
                        {"held_bytes", held},  // the sessions' payload memory of calls in progress
                        {"resident", {{"bytes", m.resident_budget.used}, {"limit", m.resident_budget.limit},
                                      {"hits", m.resident_budget.hits}, {"misses", m.resident_budget.misses},
                                      {"kept", m.resident_budget.kept}, {"evicted", m.resident_budget.evicted},
                                      {"refused", m.resident_budget.refused},
                                      {"bytes_not_sent", m.resident_budget.bytes_not_sent},
                                      {"results_not_sent", m.resident_budget.results_not_sent},
                                      {"result_bytes_not_sent", m.resident_budget.result_bytes_not_sent}}},
                        {"buffer_bytes", transport::Buffer::bytes_in_use()}};  // all payload buffers in use
  for (const auto& service : m.services) service->status(doc);
  // The reply travels as one UCX active-message header, which UCX 1.13 cannot send over shared
  // memory beyond about 8 KiB (the server aborts: "RTS is too big"; 45 sessions reached it):
  // clients are listed while the document stays within kMaxStatusBytes, the rest counted.
  constexpr size_t kMaxStatusBytes = 6144;
  size_t bytes = doc.dump().size();
  uint64_t unlisted = 0;
  nlohmann::json clients = nlohmann::json::array();
  for (const auto& [peer, s] : m.sessions) {
    nlohmann::json c = {{"id", peer},
                        {"address", s.addr},
                        {"client", s.client_name},
                        {"identity", s.state == State::ready ? s.identity : ""},
                        {"calls_in_flight", s.calls_in_flight},
                        {"held_bytes", s.held_bytes},
                        {"authenticated", s.state == State::ready},
                        {"encrypted", s.encrypted},
                        {"lanes", s.lanes.size()},
                        {"connected_seconds", (now_ns() - s.connected_ns) / 1e9},
                        {"calls", s.calls},
                        {"errors", s.errors},
                        {"bytes_in", s.bytes_in},
                        {"bytes_out", s.bytes_out},
                        {"pings", s.pings},
                        {"ping_bytes", s.ping_bytes}};
    const size_t more = c.dump().size() + 1;
    if (bytes + more > kMaxStatusBytes) {
      ++unlisted;
      continue;
    }
    bytes += more;
    clients.push_back(std::move(c));
  }
  doc["clients"] = std::move(clients);
  doc["clients_not_listed"] = unlisted;
  return doc;
}

}  // namespace outboard::server
