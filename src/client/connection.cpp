#include "client/connection.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string_view>

#include "common/clock.hpp"
#include "common/spin.hpp"
#include "common/error.hpp"
#include "transport/seal.hpp"

namespace outboard::client {
namespace {

uint64_t* call_id_of(wire::Message& m) {
  return std::visit(
      [](auto& v) -> uint64_t* {
        if constexpr (requires { v.call_id; })
          return &v.call_id;
        else
          return nullptr;
      },
      m);
}

// Spin this long before sleeping: a round trip on shared memory takes microseconds, a sleep and
// wake-up tens of them. Where cores are to spare (common/spin.hpp), as long as the server's busy
// polling, 2 ms: a remote OpenCL kernel of 0.2-0.3 ms waited for by clFinish outlasted a 200 us
// spin, and the wake-up after it cost stream's add, triad and dot 50-100 us on average on the
// H200 host (bench/results/h200/opencl).
uint64_t spin_ns() {
  static const uint64_t ns = spare_core_poll_ns() ? kCommandPollNs : 200'000;
  return ns;
}
// A pause while UCX will not arm its wake-up though nothing happens (see wait()): it doubles from
// the first while that lasts, and starts over after an event. UCX says so while a message or the
// endpoint's wire-up waits for the peer: with a swamped server, for seconds (a storm of 512
// programs on 2 cores: their polls every 6.4 ms took the cores from the server, and 240 s of CPU
// time where the programs alone take 25). It grows to an eighth of the time waited so far, as
// little as 6.4 ms and at most 51.2 ms: a reply is noticed at most that much later.
constexpr useconds_t kBusyArmPauseUs = 200;
constexpr useconds_t kLongBusyArmPauseUs = 6400;
constexpr useconds_t kLongestBusyArmPauseUs = 51200;
useconds_t next_busy_pause(useconds_t pause, uint64_t waited_ns) {
  const uint64_t bound = std::clamp<uint64_t>(waited_ns / 8000, kLongBusyArmPauseUs, kLongestBusyArmPauseUs);
  return static_cast<useconds_t>(std::min<uint64_t>(2ull * pause, bound));
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", s);
  return text;
}

}  // namespace

Connection::Connection(const ServerAddress& server, const Secret& secret, const std::string& client_name,
                       double connect_timeout_seconds, const std::string& identity, bool encrypt) {
  transport::Events ev;
  ev.on_disconnect = [this](transport::PeerId from, const std::string& why) {
    if (from == peer_) return fail(why);
    on_lane_event(from, nullptr, why);
  };
  ev.on_payload = [this](transport::PeerId, std::span<const std::byte> h, uint64_t n) { return on_payload(h, n); };
  ev.on_message = [this](transport::PeerId from, std::vector<std::byte> h, transport::Buffer b, bool refused) {
    on_message(from, std::move(h), std::move(b), refused);
  };
  server_ = server;
  connect_timeout_ = connect_timeout_seconds;
  connect_steps_.began = now_ns();
  worker_ = std::make_unique<transport::Worker>(std::move(ev));
  connect_steps_.transport_ready = now_ns();
  Lock lk(mu_);
  const std::string where = server.text();
  try {
    peer_ = worker_->connect(server.host, server.port);
    wire::Hello hello{random_nonce(), client_name, identity, encrypt};
    worker_->send(peer_, wire::encode(hello), {}, nullptr);
    // A server swamped by a storm of clients starting at once may not get to the connection
    // within the timeout, and cannot say so (wire::Hold) before it does: on 2 cores, 512 client
    // processes' own set-up takes longer than the default timeout, and the server gets its share
    // of the cores only. Its port holding the connection says it is alive: through the handshake
    // the client then waits longer (kHandshakePatience), though not for ever (a stopped server's
    // port still takes connections).
    patient_until_ns_ = now_ns() + static_cast<uint64_t>(kHandshakePatience * connect_timeout_seconds * 1e9);
    wait(lk, [&] { return handshake_reply_.has_value(); }, connect_timeout_seconds, "connecting");
    connect_steps_.challenged = now_ns();
    auto* challenge = std::get_if<wire::Challenge>(&*handshake_reply_);
    if (!challenge) throw Error("unexpected answer to hello");
    if (!macs_equal(challenge->server_proof, wire::server_proof(secret, hello.client_nonce, challenge->server_nonce)))
      throw Error("the server could not prove it knows the secret (wrong token file or OUTBOARD_IDENTITY?)");
    challenged_ = true;  // the server got to the connection: alive, whatever its socket says
    server_name_ = challenge->server_name;
    server_nonce_ = challenge->server_nonce;
    handshake_reply_.reset();
    worker_->send(peer_, wire::encode(wire::Auth{wire::client_proof(secret, challenge->server_nonce, hello.client_nonce)}),
                  {}, nullptr);
    wait(lk, [&] { return handshake_reply_.has_value(); }, connect_timeout_seconds, "authenticating");
    patient_until_ns_ = 0;
    connect_steps_.accepted = now_ns();
    auto* result = std::get_if<wire::AuthResult>(&*handshake_reply_);
    if (!result) throw Error("unexpected answer to authentication");
    if (!result->accepted) throw Error(result->message);
    // The server answers a client that insists with an encrypted session or a refusal; anything
    // else (a changed answer, an old server) is not accepted.
    if (encrypt && !result->encrypted)
      throw Error("client requires encryption (OUTBOARD_ENCRYPT=1); server " + where + " does not offer it");
    if (result->encrypted && !encrypt) throw Error("the server started encryption the client did not ask for");
    siblings_ = result->siblings;
    resident_.set_budget(result->resident_bytes);
    lane_ports_ = result->lane_ports;
    if (!result->encrypted)
      for (uint32_t lane = 1; lane < result->lanes; ++lane)
        lane_proofs_.push_back(wire::lane_proof(secret, server_nonce_, hello.client_nonce, lane));
    last_hold_ns_ = 0;  // holds renew the handshake's waits only
    if (result->encrypted) {
      // Both proofs are verified (the server's above, ours by its acceptance): the keys now.
      SessionKeys k = session_keys(secret, hello.client_nonce, server_nonce_);
      transport::SealKeys keys{k.client_to_server, k.server_to_client};
      worker_->protect(peer_, keys);
      encrypted_ = true;
    }
  } catch (const Error& e) {
    std::string why = e.what();
    if (why.find("unreachable") != std::string::npos)
      why += " (is a server listening there? UCX_TLS, if set, must include tcp for connection setup)";
    throw Error("server " + where + ": " + why);
  }
}

Connection::~Connection() {
  if (inherited()) {  // its lock may be held by a thread this process does not have
    worker_.reset();  // leaks the parent's UCX objects (transport::Worker leaves them alone)
    return;
  }
  Lock lk(mu_);
  worker_.reset();
}

uint32_t Connection::server_calls() const {
  if (now_ns() - load_at_ns_.load(std::memory_order_relaxed) > kLoadFreshNs) return 0;
  return load_calls_.load(std::memory_order_relaxed);
}

bool Connection::idle_but_for_us() const {
  // With this session the server's only one, the calls it counts are this process's own (which the
  // caller knows of); with others there, only a server with no call at all is idle.
  return server_calls() == 0 || load_sessions_.load(std::memory_order_relaxed) <= 1;
}

bool Connection::alive() const { return !dead_ && !inherited(); }

void Connection::refuse_if_inherited() const {
  if (inherited())
    throw Error("internal error: a connection of the process this one was forked from was used (each process "
                "connects on its own)");
}

std::string Connection::transport_description() {
  refuse_if_inherited();
  Lock lk(mu_);
  return worker_->describe(peer_);
}

void Connection::fail(const std::string& reason) {
  if (dead_) return;
  dead_ = true;
  dead_reason_ = reason;
  send_lane_chunks();  // what it had not sent: failed
  auto async = std::move(async_);
  async_.clear();
  for (auto& [id, p] : async) {
    pending_.erase(id);
    p->on_reply(nullptr, nullptr, reason);
  }
  cv_.notify_all();
}

std::optional<transport::Buffer> Connection::on_payload(std::span<const std::byte> header, uint64_t bytes) {
  auto m = wire::decode(header);  // a throw here refuses the payload
  uint64_t id = 0, announced = 0;
  if (auto* c = std::get_if<wire::ReplyChunk>(&m)) {
    auto it = pending_.find(c->call_id);
    if (it == pending_.end() || !it->second->chunked || bytes != c->bytes ||
        c->offset + c->bytes > it->second->reply_capacity)
      return std::nullopt;
    std::byte* to = it->second->land(c->offset, bytes);
    if (!to) return std::nullopt;
    return transport::Buffer::borrow(to, bytes);
  }
  if (auto* r = std::get_if<wire::CallReply>(&m)) id = r->call_id, announced = r->payload_bytes;
  else if (auto* p = std::get_if<wire::Pong>(&m)) id = p->call_id, announced = p->payload_bytes;
  else if (auto* l = std::get_if<wire::LapackReply>(&m)) id = l->call_id, announced = l->payload_bytes;
  else if (auto* f = std::get_if<wire::FftReply>(&m)) id = f->call_id, announced = f->payload_bytes;
  else if (auto* c = std::get_if<wire::ClReply>(&m)) id = c->call_id, announced = c->payload_bytes;
  else return std::nullopt;
  auto it = pending_.find(id);
  if (it != pending_.end() && it->second->on_reply && !it->second->reply_buffer)
    return bytes == announced ? std::optional(transport::Buffer::allocate(bytes)) : std::nullopt;
  if (it == pending_.end() || bytes != announced || bytes > it->second->reply_capacity) return std::nullopt;
  return transport::Buffer::borrow(it->second->reply_buffer, bytes);
}

void Connection::on_message(transport::PeerId from, std::vector<std::byte> header, transport::Buffer payload,
                            bool refused) {
  wire::Message m;
  try {
    m = wire::decode(header);
  } catch (const std::exception& e) {
    fail(std::string("malformed message from server: ") + e.what());
    return;
  }
  // A lane's answer to its join, or its refusal.
  if (from != peer_ && (std::holds_alternative<wire::SessionJoined>(m) || std::holds_alternative<wire::ErrorMessage>(m)))
    return on_lane_event(from, &m, "");
  // Every answer carries the server's load, with a payload or without (the direct path's and
  // chunked calls' answers have none: taking it only from payloads left the load of clients of
  // large calls always stale, so they saw busy servers as idle).
  std::visit(
      [this](const auto& x) {
        if constexpr (requires { x.load; }) {
          load_calls_.store(x.load.calls, std::memory_order_relaxed);
          load_sessions_.store(x.load.sessions, std::memory_order_relaxed);
          load_at_ns_.store(now_ns(), std::memory_order_relaxed);
          load_free_device_.store(x.load.free_device_bytes, std::memory_order_relaxed);
        }
      },
      m);
  if (auto* c = std::get_if<wire::ReplyChunk>(&m)) {
    auto it = pending_.find(c->call_id);
    if (it == pending_.end()) return;  // a late piece of a call given up on: dropped
    Pending& p = *it->second;
    if (refused || !p.chunked || p.received + c->bytes > p.reply_capacity ||
        (p.on_reply && p.replied && p.received + c->bytes > p.lane_bytes)) {
      fail("server sent a result piece that does not fit the request");
      return;
    }
    p.received += c->bytes;
    finish_if_complete(c->call_id, p);
    return;
  }
  if (refused) {
    fail("server sent a reply that does not fit the request");
    return;
  }
  if (auto* e = std::get_if<wire::ErrorMessage>(&m)) {
    fail("server closed the connection: " + e->message);
    return;
  }
  if (std::holds_alternative<wire::Challenge>(m) || std::holds_alternative<wire::AuthResult>(m)) {
    handshake_reply_ = std::move(m);
    return;
  }
  if (std::holds_alternative<wire::Hold>(m)) {
    last_hold_ns_ = now_ns();
    return;
  }
  if (std::holds_alternative<wire::ClNotice>(m)) {
    if (notice_handler_) notice_handler_(m);
    wake_waiters();  // a wait_until() may be waiting for what the notice changed
    return;
  }
  uint64_t* id = call_id_of(m);
  auto it = id ? pending_.find(*id) : pending_.end();
  if (it == pending_.end()) {
    fail("server answered a request that was not made");
    return;
  }
  if (std::holds_alternative<wire::InputTaken>(m)) {  // news of a call, not its answer
    it->second->input_taken = true;
    return;
  }
  Pending& p = *it->second;
  if (p.on_reply) {
    const auto* cl = std::get_if<wire::ClReply>(&m);
    p.lane_bytes = cl ? cl->lane_bytes : 0;
    if (p.lane_bytes && (!p.reply_buffer || p.lane_bytes > p.reply_capacity || p.received > p.lane_bytes))
      return fail("server sent a result over the lanes that does not fit the request");
    p.reply = std::move(m);
    p.replied = true;
    if (p.received < p.lane_bytes) return;  // answered when its last piece lands
    return answer_async(*id, &payload);
  }
  p.reply = std::move(m);
  if (p.chunked) {
    p.replied = true;
    finish_if_complete(*id, p);
    return;
  }
  p.done = true;
  pending_.erase(it);
  wake_waiters();
}

void Connection::wake_waiters() {
  cv_.notify_all();
  if (blocking_) worker_->signal();
}

void Connection::answer_async(uint64_t id, transport::Buffer* payload) {
  auto owned = std::move(async_.at(id));
  async_.erase(id);
  pending_.erase(id);
  owned->on_reply(&owned->reply, payload, {});
  // A thread in wait_until() for what on_reply set sleeps on the condition variable while
  // another sleeps on the transport: without this it woke at its 1 ms timeout (remote OpenCL's
  // clFinish after a 0.2 ms kernel took ~1.3 ms on the H200 host every few calls).
  wake_waiters();
}

// A chunked call is answered when its reply is in and, if it succeeded, all of its result; an
// async request when its reply and the pieces that reply announced are.
void Connection::finish_if_complete(uint64_t id, Pending& p) {
  if (!p.replied) return;
  if (p.on_reply) {
    if (p.received < p.lane_bytes) return;
    transport::Buffer none;
    return answer_async(id, &none);
  }
  auto* r = std::get_if<wire::CallReply>(&p.reply);
  auto* l = std::get_if<wire::LapackReply>(&p.reply);
  auto* f = std::get_if<wire::FftReply>(&p.reply);
  if (((r && r->ok) || (l && l->ok) || (f && f->ok)) && p.received < p.reply_capacity) return;
  p.done = true;
  pending_.erase(id);
  wake_waiters();
}

// Drives the transport until done() holds. Threads take turns: one progresses while holding the
// lock; when nothing happens for a while, one sleeps on the transport's wake-up fd (lock
// released) and the others on the condition variable.
template <class Done>
void Connection::wait(Lock& lk, Done done, double timeout_seconds, const char* what, bool background) {
  const uint64_t start = now_ns();
  const uint64_t deadline = timeout_seconds > 0 ? start + static_cast<uint64_t>(timeout_seconds * 1e9) : UINT64_MAX;
  uint64_t last_event = start;
  useconds_t busy_pause = kBusyArmPauseUs;
  bool reached = false;  // the server's port holds the connection (asked once the timeout ran out)
  // Where cores are to spare, a thread waiting for something drives the transport itself; a
  // background driver stands aside meanwhile (drive_in_background), woken from the transport's
  // sleep to do so. On the 2-core VM standing aside made remote OpenCL's clFinish slower
  // (37-44 us against 50-70, alternating runs): there the threads share the cores with the server.
  const bool stands_aside = background && spare_core_poll_ns();
  struct Foreground {
    Connection& c;
    bool on;
    Foreground(Connection& conn, bool is_on) : c(conn), on(is_on) {
      if (!on) return;
      ++c.foreground_;
      if (c.blocking_) c.worker_->signal();
    }
    ~Foreground() {
      if (on && --c.foreground_ == 0) c.cv_.notify_all();
    }
  } foreground(*this, !background);
  while (!done()) {
    if (dead_) throw Error(dead_reason_);
    if (stands_aside && foreground_ > 0) {
      cv_.notify_all();  // a foreground thread may wait for the transport's sleeper (this one) to leave
      cv_.wait_for(lk, std::chrono::milliseconds(1));
      continue;
    }
    if (worker_->progress()) {
      last_event = 0;  // read the clock only when idle
      busy_pause = kBusyArmPauseUs;
      continue;
    }
    const uint64_t now = now_ns();
    if (last_event == 0) last_event = now;
    // A server that says it is busy with other handshakes (wire::Hold) renews the deadline: the
    // timeout counts its silence only.
    const uint64_t renewed = last_hold_ns_ && timeout_seconds > 0
                                 ? last_hold_ns_ + static_cast<uint64_t>(timeout_seconds * 1e9)
                                 : 0;
    if (now > std::max(deadline, renewed) &&
        !(now < patient_until_ns_ && (challenged_ || (reached = worker_->reached(peer_))))) {
      std::string why = "no answer within " + seconds_text((now - start) / 1e9) + " s while " + what;
      if (reached) why += " (the server's port holds the connection, but the server did not get to it)";
      why += in_flight_detail();
      fail(why);
      throw Error(dead_reason_);
    }
    if (now - last_event < spin_ns()) {
      // Let other application threads post their requests, and give up the core for a moment:
      // measured on a 2-core VM, a client and server that yield on every idle poll stream small
      // messages ~50% faster than ones spinning without system calls.
      lk.unlock();
      sched_yield();
      lk.lock();
    } else if (!blocking_) {
      if (!worker_->arm()) {
        // UCX says events are pending, yet progress found none: while shared memory is being
        // wired up it says so for milliseconds on end. Polling that hot starved the machine in a
        // burst (256 clients connecting at once on 2 cores: 7.8 s of system time, up to half of
        // them past the connect timeout); a pause here, long after the last event, cost nothing.
        lk.unlock();
        usleep(busy_pause);
        lk.lock();
        busy_pause = next_busy_pause(busy_pause, now - start);
        continue;
      }
      blocking_ = true;
      lk.unlock();
      worker_->block(50);
      lk.lock();
      blocking_ = false;
      last_event = now_ns();  // spin again after a wake-up: more is likely to follow
    } else {
      cv_.wait_for(lk, std::chrono::milliseconds(1));
    }
  }
}

namespace {

// The header to send `m` with: its encoding, or, where that is longer than a header may be, an
// envelope's (wire::Enveloped), the encoding then going first in `payload`, kept in `keep` until
// the send is done.
std::vector<std::byte> header_of(const wire::Message& m, std::vector<transport::Segment>& payload,
                                 std::shared_ptr<std::vector<std::byte>>& keep) {
  std::vector<std::byte> header = wire::encode(m);
  if (header.size() <= wire::kMaxHeaderBytes) return header;
  uint64_t payload_bytes = 0;
  for (const transport::Segment& s : payload) payload_bytes += s.bytes;
  keep = std::make_shared<std::vector<std::byte>>(std::move(header));
  payload.insert(payload.begin(), transport::Segment{keep->data(), keep->size()});
  return wire::encode(wire::Enveloped{keep->size(), payload_bytes});
}

}  // namespace

uint64_t Connection::post(Lock&, wire::Message& request, std::vector<transport::Segment> payload, Pending* p,
                          std::shared_ptr<Pending> unanswered) {
  if (dead_) throw Error(dead_reason_);
  uint64_t id = next_call_++;
  if (uint64_t* slot = call_id_of(request)) *slot = id;
  if (p) pending_[id] = p;
  std::shared_ptr<std::vector<std::byte>> keep;
  std::vector<std::byte> header = header_of(request, payload, keep);
  worker_->send(peer_, header, std::move(payload), [this, unanswered, keep](bool ok) {
    (void)keep;  // the enveloped encoding, sent from
    if (!ok) fail("sending to the server failed");
    if (unanswered) unanswered->done = true;
  });
  return id;
}

void Connection::notify(wire::Message message, std::vector<transport::Segment> payload,
                        std::function<void(bool ok)> sent) {
  refuse_if_inherited();
  Lock lk(mu_);
  if (dead_) throw Error(dead_reason_);
  if (uint64_t* slot = call_id_of(message)) *slot = 0;  // not answered
  std::shared_ptr<std::vector<std::byte>> keep;
  std::vector<std::byte> header = header_of(message, payload, keep);
  worker_->send(peer_, header, std::move(payload), [this, sent = std::move(sent), keep](bool ok) {
    (void)keep;  // the enveloped encoding, sent from
    if (!ok) fail("sending to the server failed");
    if (sent) sent(ok);
  });
  worker_->progress();  // out now, not at the next request: the server starts on it at once
}

void Connection::request_async(wire::Message request, std::vector<transport::Segment> payload, void* reply_buffer,
                               uint64_t reply_capacity, AsyncReply done) {
  refuse_if_inherited();
  Lock lk(mu_);
  auto p = std::make_unique<Pending>();
  p->reply_buffer = reply_buffer;
  p->reply_capacity = reply_buffer ? reply_capacity : UINT64_MAX;
  p->on_reply = std::move(done);
  if (reply_buffer) {  // pieces over the lanes (wire::ClReply::lane_bytes) land where the reply would
    p->chunked = true;
    p->land = [reply_buffer](uint64_t offset, uint64_t) { return static_cast<std::byte*>(reply_buffer) + offset; };
  }
  Pending* raw = p.get();
  uint64_t id = post(lk, request, std::move(payload), raw);
  async_[id] = std::move(p);
  if (dead_) {  // the send failed at once, before fail() could see this request: answered here
    pending_.erase(id);
    auto failed = std::move(async_[id]);
    async_.erase(id);
    failed->on_reply(nullptr, nullptr, dead_reason_);
    return;
  }
  worker_->progress();
}

void Connection::set_notice_handler(std::function<void(const wire::Message&)> handler) {
  Lock lk(mu_);
  notice_handler_ = std::move(handler);
}

void Connection::wait_until(const std::function<bool()>& done, double timeout_seconds, const char* what) {
  refuse_if_inherited();
  Lock lk(mu_);
  wait(lk, done, timeout_seconds, what);
}

void Connection::drive_in_background(const char* what) {
  refuse_if_inherited();
  Lock lk(mu_);
  wait(lk, [] { return false; }, 0, what, /*background=*/true);
}

wire::Message Connection::request(wire::Message request, std::vector<transport::Segment> payload, void* reply_buffer,
                                  uint64_t reply_capacity, double timeout_seconds) {
  refuse_if_inherited();
  Lock lk(mu_);
  Pending p;
  p.reply_buffer = reply_buffer;
  p.reply_capacity = reply_capacity;
  uint64_t id = post(lk, request, std::move(payload), &p);
  try {
    wait(lk, [&] { return p.done; }, timeout_seconds, "waiting for a reply");
  } catch (...) {
    pending_.erase(id);
    throw;
  }
  return std::move(p.reply);
}

// The chunks of one call, sent a few at a time: chunks queued all at once would share the link
// and arrive together at the end, when the point is that the first arrive first.
struct Connection::ChunkSender {
  wire::Message chunk;  // the next chunk's header, its index aside
  uint64_t payload_bytes = 0, chunk_bytes = 0;
  std::vector<transport::Segment> payload;
  ChunkPacker pack;
  uint64_t count = 0, next = 0, in_flight = 0, window = 1;
  std::vector<bool> held;  // chunks the server fills from resident inputs (wire::held_chunks): not sent
  void skip_held() {
    while (next < held.size() && held[next]) ++next;
  }
};

namespace {
// The chunk fields of a CallChunk, LapackChunk or FftChunk.
template <class F>
void with_chunk(wire::Message& m, F f) {
  if (auto* c = std::get_if<wire::CallChunk>(&m)) return f(*c);
  if (auto* c = std::get_if<wire::LapackChunk>(&m)) return f(*c);
  if (auto* c = std::get_if<wire::FftChunk>(&m)) return f(*c);
  throw Error("internal error: a chunked request needs a CallChunk, LapackChunk or FftChunk");
}
}  // namespace

void Connection::send_chunks(const std::shared_ptr<ChunkSender>& cs) {
  const uint64_t window = cs->window * bulk_peers().size();  // per connection
  for (cs->skip_held(); !dead_ && cs->next < cs->count && cs->in_flight < window; cs->skip_held()) {
    const uint64_t index = cs->next++;
    with_chunk(cs->chunk, [&](auto& c) { c.chunk_index = index; });
    // The chunk's bytes, cut out of the payload's segments.
    const uint64_t begin = index * cs->chunk_bytes, end = std::min(begin + cs->chunk_bytes, cs->payload_bytes);
    if (cs->pack) cs->pack(begin, end);
    std::vector<transport::Segment> piece;
    uint64_t at = 0;
    for (const auto& seg : cs->payload) {
      const uint64_t lo = std::max(begin, at), hi = std::min<uint64_t>(end, at + seg.bytes);
      if (lo < hi) piece.push_back({static_cast<const std::byte*>(seg.data) + (lo - at), hi - lo});
      at += seg.bytes;
    }
    ++cs->in_flight;
    worker_->send(next_bulk_peer(), wire::encode(cs->chunk), std::move(piece), [this, cs](bool ok) {
      --cs->in_flight;
      if (!ok) return fail("sending to the server failed");
      send_chunks(cs);
    });
  }
}

wire::Message Connection::chunked_request(wire::Message first, std::vector<transport::Segment> payload,
                                          ResultLanding land, uint64_t reply_bytes, double timeout_seconds,
                                          unsigned window, ChunkPacker pack) {
  refuse_if_inherited();
  Lock lk(mu_);
  if (dead_) throw Error(dead_reason_);
  open_link_lanes(lk);
  Pending p;
  p.reply_capacity = reply_bytes;
  p.chunked = true;
  p.land = std::move(land);
  auto cs = std::make_shared<ChunkSender>();
  const uint64_t call_id = next_call_++;
  with_chunk(first, [&](auto& c) {
    c.call_id = call_id;
    cs->payload_bytes = c.payload_bytes;
    cs->chunk_bytes = c.chunk_bytes;
    if constexpr (requires { c.resident; })
      cs->held = wire::held_chunks(c.resident, wire::input_bytes(c.call), c.payload_bytes, c.chunk_bytes);
  });
  cs->chunk = std::move(first);
  cs->payload = std::move(payload);
  cs->pack = std::move(pack);
  cs->count = wire::chunk_count(cs->payload_bytes, cs->chunk_bytes);
  cs->window = std::max(1u, window);
  pending_[call_id] = &p;
  try {
    send_chunks(cs);
    // The payload is the application's memory: return only once no send uses it.
    wait(lk, [&] { return p.done && cs->in_flight == 0; }, timeout_seconds, "waiting for a reply");
  } catch (...) {
    pending_.erase(call_id);
    throw;
  }
  return std::move(p.reply);
}

wire::Message Connection::lanes_request(bool cma) const {
  return wire::LanesRequest{0, worker_->address(), cma ? static_cast<uint32_t>(getpid()) : 0,
                            cma ? reinterpret_cast<uint64_t>(server_nonce_.data()) : 0};
}

void Connection::ask_direct_lanes(bool cma) {
  refuse_if_inherited();
  Lock lk(mu_);
  if (lanes_ || lanes_asked_ || encrypted_) return;
  wire::Message request = lanes_request(cma);
  auto asked = std::make_shared<Pending>();
  post(lk, request, {}, asked.get());
  lanes_asked_ = std::move(asked);
  worker_->progress();  // out now: the server sets the lanes up while the program goes on
}

uint32_t Connection::direct_lanes(double timeout_seconds, bool cma) {
  refuse_if_inherited();
  Lock lk(mu_);
  if (lanes_) return *lanes_;
  if (encrypted_) return 0;  // copy lanes read and write memory one-sidedly: nothing sealed
  if (dead_) throw Error(dead_reason_);
  wire::Message reply;
  if (lanes_asked_) {  // asked ahead (ask_direct_lanes): its answer, arrived or to come
    std::shared_ptr<Pending> asked = lanes_asked_;
    wait(lk, [&] { return asked->done; }, timeout_seconds, "waiting for a reply");
    if (lanes_) return *lanes_;  // another thread took the answer
    reply = std::move(asked->reply);
    lanes_asked_.reset();
  } else {
    wire::Message request = lanes_request(cma);
    Pending p;
    uint64_t id = post(lk, request, {}, &p);
    try {
      wait(lk, [&] { return p.done; }, timeout_seconds, "waiting for a reply");
    } catch (...) {
      pending_.erase(id);
      throw;
    }
    reply = std::move(p.reply);
  }
  auto* r = std::get_if<wire::LanesReply>(&reply);
  lanes_ = r ? r->lanes : 0;
  if (*lanes_ > 0 && r->message == "ucx" && !ucx_over_tcp_ && one_sided_over_tcp()) lanes_ = 0;
  return *lanes_;
}

// Whether UCX runs this session's one-sided operations over TCP only: every lane of the endpoint
// that carries them (its "rma_bw" lanes) is a tcp one, or none does (UCX then emulates them).
bool Connection::one_sided_over_tcp() const {
  const std::string lanes = worker_->describe(peer_);
  for (size_t pos = 0; pos < lanes.size();) {
    size_t eol = lanes.find('\n', pos);
    if (eol == std::string::npos) eol = lanes.size();
    const std::string_view line(lanes.data() + pos, eol - pos);
    if (line.find("rma_bw") != std::string_view::npos && line.find("tcp/") == std::string_view::npos) return false;
    pos = eol + 1;
  }
  return true;
}

transport::Registration Connection::register_memory(void* data, size_t bytes) {
  refuse_if_inherited();
  Lock lk(mu_);
  return worker_->register_memory(data, bytes);
}

wire::Message Connection::direct_request(wire::Message m, bool gated, const std::function<void()>& keep,
                                         bool& proceeded, double timeout_seconds) {
  refuse_if_inherited();
  proceeded = false;
  Lock lk(mu_);
  Pending p;
  const uint64_t id = post(lk, m, {}, &p);
  try {
    if (gated) {
      wait(lk, [&] { return p.input_taken || p.done; }, timeout_seconds, "waiting for the server to copy the input");
      lk.unlock();
      keep();
      lk.lock();
      if (!p.done) {  // a failed call is answered at once: nothing to let through then
        wire::Message go = wire::Proceed{id};
        worker_->send(peer_, wire::encode(go), {}, [this](bool ok) {
          if (!ok) fail("sending to the server failed");
        });
        proceeded = true;
      }
    }
    wait(lk, [&] { return p.done; }, timeout_seconds, "waiting for a reply");
  } catch (...) {
    pending_.erase(id);
    throw;
  }
  return std::move(p.reply);
}

void Connection::stream_sent(void* self, bool ok) {
  auto* c = static_cast<Connection*>(self);
  --c->stream_sends_;
  if (!ok) c->fail("sending to the server failed");
}

void Connection::set_stream_sink(bool on) {
  Lock lk(mu_);
  use_sink_ = on;
}

// The server's sink for a plain stream of `bytes` messages, 0 for none (then the messages carry
// their ping headers). Asked once per connection.
uint32_t Connection::stream_sink(uint64_t bytes) {
  {
    Lock lk(mu_);
    if (!use_sink_ || encrypted_) return 0;  // a sink's messages have no header to seal
    if (sink_) return bytes <= sink_->max_bytes ? sink_->sink : 0;
  }
  wire::Message reply = request(wire::SinkRequest{}, {}, nullptr, 0, 30);
  auto* r = std::get_if<wire::SinkReply>(&reply);
  Lock lk(mu_);
  sink_ = r ? *r : wire::SinkReply{0, 0, 0, "the server answered the sink request with something else"};
  if (sink_->sink > transport::Worker::kMaxSinks) *sink_ = {0, 0, 0, "the server offered an invalid sink id"};
  return bytes <= sink_->max_bytes ? sink_->sink : 0;
}

void Connection::ping_stream(const void* data, uint64_t bytes, int count, int window, uint8_t flags) {
  refuse_if_inherited();
  const uint32_t sink = flags == 0 ? stream_sink(bytes) : 0;
  Lock lk(mu_);
  if (dead_) throw Error(dead_reason_);
  // One stream at a time: the unanswered messages borrow one header, which may be rewritten only
  // once the previous stream's sends have all completed (after an error too).
  wait(lk, [&] { return !streaming_ && stream_sends_ == 0; }, 0, "waiting for another stream");
  streaming_ = true;
  struct EndStream {
    Connection* c;
    ~EndStream() {
      c->streaming_ = false;
      c->cv_.notify_all();
    }
  } end_stream{this};
  // Device transfers run on the server's compute threads, in no order the lanes could keep: they
  // go over this connection alone.
  if (flags == 0) open_link_lanes(lk);
  const std::vector<transport::PeerId> paths = flags == 0 ? bulk_peers() : std::vector<transport::PeerId>{peer_};
  const int lanes = static_cast<int>(paths.size());
  window = std::max(window, 1);
  const transport::Segment segment{data, bytes};
  const std::span<const transport::Segment> payload(&segment, bytes ? 1 : 0);
  // Plain streaming is acknowledged in batches, as NetPIPE's streaming mode is: a reply per
  // message would measure request/response, not streaming. Every message then goes unanswered
  // (the server checks it, counts it and drops it as it arrives) and the acknowledgement is an
  // empty ping of its own behind the batch, on the same connection (a connection delivers in
  // order; lanes do not keep order among each other). Device transfers run on the server's
  // compute threads, whose order is not the arrival order: there every message is answered.
  const bool plain = flags == 0;
  const int ack_every = plain ? std::max(1, window / 2) : 1;
  // The headers are encoded once; an acknowledged ping gets its call id written in per message.
  // Unanswered messages go out with nothing copied or kept per message (send_borrowed).
  std::array<std::byte, wire::kPingBytes> loud;
  wire::encode_ping(wire::Ping{0, bytes, static_cast<uint8_t>(flags | wire::Ping::no_reply)}, stream_header_);
  // The acknowledged pings in flight, oldest first, in a ring: a reply to one says that the server
  // has taken every message up to it on its connection.
  struct Ack {
    uint64_t id = 0;
    int upto = 0;  // messages sent including this one
    Pending pending;
  };
  std::vector<Ack> acks(static_cast<size_t>(lanes * (window / ack_every + 2)));
  std::vector<int> since_ack(static_cast<size_t>(lanes), 0);
  size_t head = 0, live = 0;
  int sent = 0, acked = 0;
  auto forget = [&] {
    for (size_t i = 0; i < live; ++i) pending_.erase(acks[(head + i) % acks.size()].id);
  };
  try {
    while (sent < count || live > 0) {
      while (sent < count && sent - acked < window * lanes && live < acks.size()) {
        const int lane = sent % lanes;
        // Every connection's last message is acknowledged, so that the last reply covers them all.
        const bool ack = ++since_ack[lane] == ack_every || sent + lanes >= count;
        if (ack) since_ack[lane] = 0;
        const transport::PeerId to = paths[lane];
        if (!ack || plain) {
          ++stream_sends_;
          if (sink && to == peer_)
            worker_->send_to_sink(peer_, sink, data, bytes, &stream_done_);
          else
            worker_->send_borrowed(to, stream_header_, data, bytes, &stream_done_);
        }
        if (ack) {
          Ack& a = acks[(head + live) % acks.size()];
          a.id = next_call_++;
          a.upto = sent + 1;
          a.pending = Pending{};
          wire::encode_ping(wire::Ping{a.id, plain ? 0 : bytes, flags}, loud);
          pending_[a.id] = &a.pending;
          ++live;
          ++stream_sends_;
          worker_->send(to, loud, plain ? std::span<const transport::Segment>() : payload, stream_done_);
        }
        ++sent;
        if (dead_) throw Error(dead_reason_);
      }
      Ack& oldest = acks[head];
      wait(lk, [&] { return oldest.pending.done; }, 0, "streaming");
      if (auto* r = std::get_if<wire::CallReply>(&oldest.pending.reply); r && !r->ok) {
        head = (head + 1) % acks.size(), --live;
        throw Error("server: " + r->message);
      }
      acked = oldest.upto;
      head = (head + 1) % acks.size();
      --live;
    }
    // The server has everything; the data is ours again once the transport says so too.
    wait(lk, [&] { return stream_sends_ == 0; }, 0, "streaming");
  } catch (...) {
    forget();
    throw;
  }
}

void Connection::fill_stream(void* into, uint64_t bytes, int count, int window) {
  refuse_if_inherited();
  Lock lk(mu_);
  if (dead_) throw Error(dead_reason_);
  open_link_lanes(lk);
  const std::vector<transport::PeerId> paths = bulk_peers();
  const size_t in_flight = paths.size() * static_cast<size_t>(std::max(window, 1));
  struct Ask {
    uint64_t id = 0;
    Pending pending;
  };
  std::vector<Ask> asks(in_flight);  // ask i in slot i % in_flight: at most in_flight apart
  size_t sent = 0, received = 0;
  const size_t total = static_cast<size_t>(std::max(count, 0));
  std::array<std::byte, wire::kPingBytes> header;
  try {
    while (received < total) {
      while (sent < total && sent - received < in_flight) {
        Ask& a = asks[sent % in_flight];
        a.id = next_call_++;
        a.pending = Pending{};
        a.pending.reply_buffer = into;
        a.pending.reply_capacity = bytes;
        pending_[a.id] = &a.pending;
        wire::encode_ping(wire::Ping{a.id, bytes, wire::Ping::fill}, header);
        worker_->send(paths[sent % paths.size()], header, {}, [this](bool ok) {
          if (!ok) fail("sending to the server failed");
        });
        ++sent;
      }
      Ask& oldest = asks[received % in_flight];
      wait(lk, [&] { return oldest.pending.done; }, 0, "receiving");
      ++received;
      auto* pong = std::get_if<wire::Pong>(&oldest.pending.reply);
      if (auto* r = std::get_if<wire::CallReply>(&oldest.pending.reply)) throw Error("server: " + r->message);
      if (!pong || pong->payload_bytes != bytes) throw Error("unexpected answer to a fill ping");
    }
  } catch (...) {
    for (size_t i = received; i < sent; ++i) pending_.erase(asks[i % in_flight].id);
    throw;
  }
}

// ---- lanes ----

void Connection::set_link_lanes(unsigned wanted) {
  Lock lk(mu_);
  lanes_wanted_ = std::max(1u, wanted);
}

unsigned Connection::link_lanes_in_use() {
  Lock lk(mu_);
  return static_cast<unsigned>(bulk_peers().size());
}

std::string Connection::in_flight_detail() const {
  std::string d;
  auto add = [&](uint64_t n, const char* what) {
    if (n) d += (d.empty() ? " [" : ", ") + std::to_string(n) + " " + what;
  };
  add(pending_.size(), "requests unanswered");
  add(async_.size(), "of them asynchronous");
  add(lane_queue_.size(), "lane chunks not yet sent");
  add(lane_in_flight_, "lane chunks sending");
  return d.empty() ? d : d + "]";
}

bool Connection::bulk_over_lanes() {
  refuse_if_inherited();
  Lock lk(mu_);
  if (dead_) return false;
  open_link_lanes(lk);
  return bulk_peers().front() != peer_;
}

// One send_lane_data(): its chunks' header and data, and the chunks not yet sent (plus one
// until all are queued).
struct Connection::LaneData {
  wire::ClChunk chunk;
  const std::byte* data = nullptr;
  uint64_t left = 1;
  bool ok = true;
  std::function<void(bool)> sent;
  void one_done(bool fine) {
    ok = ok && fine;
    if (--left == 0 && sent) sent(ok);
  }
};

void Connection::send_lane_data(uint64_t transfer, const void* data, uint64_t bytes, uint64_t chunk_bytes,
                                std::function<void(bool ok)> sent) {
  refuse_if_inherited();
  Lock lk(mu_);
  if (dead_) throw Error(dead_reason_);
  auto d = std::make_shared<LaneData>();
  d->chunk = wire::ClChunk{transfer, bytes, std::max(chunk_bytes, wire::kMinChunkBytes), 0};
  d->data = static_cast<const std::byte*>(data);
  d->sent = std::move(sent);
  const uint64_t count = wire::chunk_count(bytes, d->chunk.chunk_bytes);
  d->left += count;
  for (uint64_t i = 0; i < count; ++i) lane_queue_.push_back({d, i});
  d->one_done(true);
  send_lane_chunks();
  worker_->progress();
}

// A few chunks in flight per lane, as a chunked call's: all of several transfers at once (hundreds
// of 4 MiB sends) stalled a session on the H200 host until UCX timed its connection out.
void Connection::send_lane_chunks() {
  const uint64_t window = uint64_t(kDefaultChunkWindow) * bulk_peers().size();
  while (!lane_queue_.empty() && lane_in_flight_ < window) {
    LaneChunk c = std::move(lane_queue_.front());
    lane_queue_.pop_front();
    if (dead_) {
      c.of->one_done(false);
      continue;
    }
    wire::ClChunk chunk = c.of->chunk;
    chunk.chunk_index = c.index;
    const transport::Segment piece{c.of->data + wire::chunk_offset(chunk), wire::chunk_length(chunk)};
    ++lane_in_flight_;
    worker_->send(next_bulk_peer(), wire::encode(chunk), {&piece, 1}, [this, of = c.of](bool ok) {
      --lane_in_flight_;
      if (!ok) fail("sending to the server failed");
      of->one_done(ok);
      send_lane_chunks();
    });
  }
}

// Whether this session's bulk data crosses TCP: every UCX lane of its endpoint that carries
// bulk active messages (am_bw) is a tcp one.
bool Connection::bulk_over_tcp() const {
  const std::string lanes = worker_->describe(peer_);
  bool any = false;
  for (size_t pos = 0; pos < lanes.size();) {
    size_t eol = lanes.find('\n', pos);
    if (eol == std::string::npos) eol = lanes.size();
    const std::string_view line(lanes.data() + pos, eol - pos);
    if (line.find("am_bw") != std::string_view::npos) {
      if (line.find("tcp/") == std::string_view::npos) return false;
      any = true;
    }
    pos = eol + 1;
  }
  return any;
}

void Connection::open_link_lanes(Lock& lk) {
  if (lanes_opened_ || inherited()) return;
  lanes_opened_ = true;
  const size_t lanes = std::min<size_t>(lanes_wanted_, lane_proofs_.size() + 1);
  if (lanes <= 1 || encrypted_ || !bulk_over_tcp()) return;
  for (uint32_t n = 1; n < lanes; ++n) {
    LinkLane lane;
    try {
      // To the server's lane threads where it has them, each lane on a thread of its own here too:
      // a lane's bytes then cost a core of their own on both sides.
      lane.peer = lane_ports_.empty() ? worker_->connect(server_.host, server_.port)
                                      : worker_->connect_lane(server_.host, lane_ports_[(n - 1) % lane_ports_.size()]);
    } catch (const Error&) {
      break;  // the address served the first connection: not expected; go on with those there are
    }
    link_lanes_.push_back(lane);
    worker_->send(lane.peer, wire::encode(wire::JoinSession{server_nonce_, n, lane_proofs_[n - 1]}), {}, nullptr);
  }
  // Each joins or fails within the connect timeout; one that did not is closed and not used.
  // The wait is this thread's alone: the connection is held throughout.
  const uint64_t deadline = now_ns() + static_cast<uint64_t>(connect_timeout_ * 1e9);
  auto settled = [&] {
    return std::all_of(link_lanes_.begin(), link_lanes_.end(), [](const LinkLane& l) { return l.joined; });
  };
  while (!dead_ && !settled() && now_ns() < deadline) {
    if (worker_->progress()) continue;
    lk.unlock();
    usleep(50);
    lk.lock();
  }
  for (auto it = link_lanes_.begin(); it != link_lanes_.end();) {
    if (it->joined) {
      ++it;
      continue;
    }
    worker_->close(it->peer, true);
    it = link_lanes_.erase(it);
  }
}

// The joined lanes, and this connection unless they have threads of their own: then its thread,
// which also posts and delivers for every lane, carries no bulk data (with a share of it, that
// thread was at a full core over 8 connections, and calls' own messages waited behind it).
std::vector<transport::PeerId> Connection::bulk_peers() const {
  std::vector<transport::PeerId> peers;
  for (const LinkLane& l : link_lanes_)
    if (l.joined) peers.push_back(l.peer);
  if (peers.empty() || !transport::Worker::is_lane(peers.front())) peers.insert(peers.begin(), peer_);
  return peers;
}

transport::PeerId Connection::next_bulk_peer() {
  const std::vector<transport::PeerId> peers = bulk_peers();
  return peers[next_bulk_++ % peers.size()];
}

// A lane's join answered (m: SessionJoined, or an ErrorMessage), or the lane lost (m null). A
// joined lane lost fails the connection: the server ends the session with it, and what it
// carried is gone. One that never joined is only not used.
void Connection::on_lane_event(transport::PeerId lane, const wire::Message* m, const std::string& why) {
  auto it = std::find_if(link_lanes_.begin(), link_lanes_.end(), [&](const LinkLane& l) { return l.peer == lane; });
  if (it == link_lanes_.end()) return;
  const auto* joined = m ? std::get_if<wire::SessionJoined>(m) : nullptr;
  if (joined && joined->ok && !it->joined) {
    it->joined = true;
    return wake_waiters();
  }
  if (it->joined) {
    const auto* error = m ? std::get_if<wire::ErrorMessage>(m) : nullptr;
    return fail("a lane to the server failed: " + (error ? error->message : joined ? joined->message : why));
  }
  worker_->close(lane, true);
  link_lanes_.erase(it);
  wake_waiters();
}

}  // namespace outboard::client
