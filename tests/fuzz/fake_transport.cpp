// transport::Worker without UCX (fake_transport.hpp): linked instead of worker.cpp into the
// session fuzzer. It keeps worker.cpp's contract with the server: a payload's landing is decided
// by on_payload during progress(), messages are delivered after the arrivals of that progress()
// and only while their peer is known, nothing is delivered from a peer the server closed, and
// on_disconnect is not called after close().
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>

#include "common/error.hpp"
#include "fake_transport.hpp"

namespace outboard::transport {
namespace {

// The Worker's state, reached by the harness through Network.
struct State {
  Events events;
  PeerId next_peer = 1;
  std::set<PeerId> peers;  // connected, not closed by the server
  std::map<PeerId, uint32_t> sinks;
  uint32_t next_sink = 1;
  std::deque<uint32_t> free_sinks;  // closed ids, reused (longest closed first) once all are made
  // As the real Worker does: the peer's sink id goes back to the pool with the peer.
  void drop_sink(PeerId peer) {
    if (auto it = sinks.find(peer); it != sinks.end()) {
      free_sinks.push_back(it->second);
      sinks.erase(it);
    }
  }

  struct Input {
    enum class Kind { connect, message, sink, hang_up } kind;
    PeerId peer = 0;
    std::string addr;
    std::vector<std::byte> header, payload;
    bool rendezvous = false;
    uint64_t sink_bytes = 0;
  };
  std::deque<Input> inputs;
  struct Delivery {
    PeerId peer;
    std::vector<std::byte> header;
    Buffer payload;
    bool refused;
    bool hang_up = false;  // the peer's connection is lost here, in order with its messages
  };
  std::vector<Delivery> later;                     // rendezvous: delivered at the next progress()
  std::vector<std::function<void()>> completions;  // sends' done callbacks, run at the next progress()
  std::vector<fake::Sent> sent;

  // worker.cpp's on_am: where the payload lands, then the message is queued for delivery.
  void land(Input& in, std::vector<Delivery>& now) {
    if (!peers.count(in.peer)) return;
    if (in.payload.empty()) {
      now.push_back({in.peer, std::move(in.header), Buffer{}, false});
      return;
    }
    Landing landing;
    if (events.on_payload) {
      try {
        landing = events.on_payload(in.peer, in.header, in.payload.size());
      } catch (...) {
        landing = Landing::refuse();
      }
    }
    auto& queue = in.rendezvous ? later : now;
    switch (landing.action()) {
      case Landing::Action::discard:
        return;  // consumed whole: nothing is delivered
      case Landing::Action::receive: {
        Buffer dst = std::move(landing.buffer());
        if (dst.size() < in.payload.size()) break;
        std::memcpy(dst.data(), in.payload.data(), in.payload.size());
        queue.push_back({in.peer, std::move(in.header), std::move(dst), false});
        return;
      }
      case Landing::Action::refuse:
        break;
    }
    queue.push_back({in.peer, std::move(in.header), Buffer{}, true});
  }

  bool busy() const { return !inputs.empty() || !completions.empty() || !later.empty(); }

  void record(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload) {
    fake::Sent s{peer, {header.begin(), header.end()}, {}};
    for (const Segment& seg : payload) {
      const auto* b = static_cast<const std::byte*>(seg.data);
      s.payload.insert(s.payload.end(), b, b + seg.bytes);
    }
    sent.push_back(std::move(s));
  }
};

State* g_state = nullptr;  // the process's one Worker's

State& state() {
  if (!g_state) throw Error("fake transport: no Worker yet");
  return *g_state;
}

}  // namespace

struct Worker::Impl : State {};

Worker::Worker(Events events, Options) : impl_(std::make_unique<Impl>()) {
  if (g_state) throw Error("fake transport: one Worker per process");
  impl_->events = std::move(events);
  g_state = impl_.get();
}

Worker::~Worker() {
  for (auto& done : impl_->completions) done();
  g_state = nullptr;
}

uint16_t Worker::listen(const std::string&, uint16_t port) { return port ? port : 7700; }

PeerId Worker::connect(const std::string&, uint16_t) { throw Error("fake transport: no outgoing connections"); }

// No lane threads here: the server under test offers none (its lanes join on its port).
std::vector<uint16_t> Worker::listen_lanes(const std::string&, unsigned, uint16_t) { return {}; }
PeerId Worker::connect_lane(const std::string&, uint16_t) { throw Error("fake transport: no outgoing connections"); }
bool Worker::is_lane(PeerId) { return false; }
void Worker::land(uint64_t, Landing) {}

void Worker::send(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload,
                  std::function<void(bool ok)> done) {
  Impl& m = *impl_;
  const bool ok = m.peers.count(peer) != 0;
  if (ok) m.record(peer, header, payload);
  if (done) m.completions.push_back([done = std::move(done), ok] { done(ok); });
}

void Worker::send(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload, SendDone done) {
  Impl& m = *impl_;
  const bool ok = m.peers.count(peer) != 0;
  if (ok) m.record(peer, header, payload);
  if (done.fn) done.fn(done.arg, ok);  // as a send UCX completes at once
}

void Worker::send_borrowed(PeerId peer, std::span<const std::byte> header, const void* data, size_t bytes,
                           const SendDone* done) {
  const Segment seg{data, bytes};
  send(peer, header, {&seg, bytes ? 1u : 0u}, done ? *done : SendDone{});
}

uint32_t Worker::open_sink(PeerId peer) {
  Impl& m = *impl_;
  if (!m.peers.count(peer)) throw Error("no such peer");
  if (auto it = m.sinks.find(peer); it != m.sinks.end()) return it->second;
  // New ids first, then closed ones (the real Worker's order): a fuzzing process that lives through
  // thousands of sessions never runs out while few are open (it did, and a peer was then refused
  // a sink when alone that it got beside others).
  if (m.next_sink <= kMaxSinks) return m.sinks[peer] = m.next_sink++;
  if (m.free_sinks.empty()) throw Error("all sinks are open");
  const uint32_t id = m.free_sinks.front();
  m.free_sinks.pop_front();
  return m.sinks[peer] = id;
}

void Worker::send_to_sink(PeerId, uint32_t, const void*, size_t, const SendDone* done) {
  if (done) done->fn(done->arg, false);
}

void Worker::close(PeerId peer, bool) {
  impl_->peers.erase(peer);
  impl_->drop_sink(peer);
}

bool Worker::connected(PeerId peer) const { return impl_->peers.count(peer) != 0; }

// The harness's server never seals (Config::encrypt stays false): the fuzzer cannot forge an
// AEAD, so sealed sessions would only ever end at their first message.
void Worker::protect(PeerId, const SealKeys&) { throw Error("fake transport: sessions are never sealed here"); }
bool Worker::is_protected(PeerId) const { return false; }

bool Worker::progress() {
  Impl& m = *impl_;
  const bool any = m.busy();
  auto completions = std::move(m.completions);
  m.completions.clear();
  for (auto& done : completions) done();
  // Arrivals first (their landings), then deliveries in order: rendezvous ones from the last
  // progress(), then this one's eager ones.
  std::vector<State::Delivery> now = std::move(m.later);
  m.later.clear();
  while (!m.inputs.empty()) {
    State::Input in = std::move(m.inputs.front());
    m.inputs.pop_front();
    switch (in.kind) {
      case State::Input::Kind::connect:
        m.peers.insert(in.peer);
        if (m.events.on_connect) m.events.on_connect(in.peer, in.addr);
        break;
      case State::Input::Kind::message:
        m.land(in, now);
        break;
      case State::Input::Kind::sink:
        if (m.sinks.count(in.peer) && m.events.on_sink) m.events.on_sink(in.peer, in.sink_bytes);
        break;
      case State::Input::Kind::hang_up:
        now.push_back({in.peer, {}, Buffer{}, false, true});
        break;
    }
  }
  for (State::Delivery& d : now) {
    if (!m.peers.count(d.peer)) continue;
    if (d.hang_up) {
      m.peers.erase(d.peer);
      m.drop_sink(d.peer);
      if (m.events.on_disconnect) m.events.on_disconnect(d.peer, "connection lost: fake hang-up");
      continue;
    }
    if (m.events.on_message) m.events.on_message(d.peer, std::move(d.header), std::move(d.payload), d.refused);
  }
  return any;
}

bool Worker::arm() { return !impl_->busy(); }
void Worker::block(int) {}
void Worker::wait(int timeout_ms) {
  if (arm()) block(timeout_ms);
}
Worker::Tables Worker::tables() const { return {impl_->peers.size(), 0, 0}; }
// Messages in memory cannot stall: the receive probe has nothing to find here.
bool Worker::receiving(double, double, bool) { return true; }
Worker::ProbeCounts Worker::probe_counts() const { return {}; }
void Worker::signal() {}

std::vector<std::byte> Worker::address() const { return std::vector<std::byte>(16, std::byte{0x42}); }

Registration Worker::register_memory(void*, size_t) { throw Error("fake transport: no memory registration"); }

std::string Worker::describe(PeerId) const { return "fake"; }

Registration::Registration(Registration&& o) noexcept { *this = std::move(o); }
Registration& Registration::operator=(Registration&& o) noexcept {
  if (this != &o) {
    release();
    ucx_ = o.ucx_, owner_ = o.owner_, context_ = o.context_, handle_ = o.handle_, key_ = std::move(o.key_);
    o.handle_ = nullptr;
  }
  return *this;
}
Registration::~Registration() { release(); }
void Registration::release() { handle_ = nullptr; }

// ---- the harness's side ----

namespace fake {

Network& Network::get() {
  state();
  static Network n;
  return n;
}

PeerId Network::connect(const std::string& addr) {
  State& m = state();
  const PeerId p = m.next_peer++;
  m.inputs.push_back({State::Input::Kind::connect, p, addr, {}, {}, false});
  return p;
}

void Network::arrive(PeerId peer, std::vector<std::byte> header, std::vector<std::byte> payload, bool rendezvous) {
  state().inputs.push_back({State::Input::Kind::message, peer, "", std::move(header), std::move(payload), rendezvous});
}

void Network::arrive_in_sink(PeerId peer, uint64_t bytes) {
  State::Input in{State::Input::Kind::sink, peer, "", {}, {}, false};
  in.sink_bytes = bytes;
  state().inputs.push_back(std::move(in));
}

void Network::hang_up(PeerId peer) {
  state().inputs.push_back({State::Input::Kind::hang_up, peer, "", {}, {}, false});
}

bool Network::open(PeerId peer) const { return state().peers.count(peer) != 0; }

bool Network::pending() const { return state().busy(); }

std::vector<Sent> Network::take_sent() {
  std::vector<Sent> out = std::move(state().sent);
  state().sent.clear();
  return out;
}

}  // namespace fake
}  // namespace outboard::transport
