#include "dcuda/runtime/proxy.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "common/spin.hpp"
#include "dcuda/runtime/incoming.hpp"
#include "dcuda/runtime/outgoing.hpp"
#include "dcuda/runtime/proxy_context.hpp"
#include "dcuda/runtime/world_barrier.hpp"

namespace dcuda::runtime {

using namespace proxy_detail;
using outboard::Error;
using outboard::ProtocolError;

namespace {

std::string hex(std::span<const uint8_t> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) s += digits[b >> 4], s += digits[b & 15];
  return s;
}

bool same_key(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;  // constant time: the key is a secret
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// "host:port" (the host may itself hold colons: IPv6) into its parts.
std::pair<std::string, uint16_t> split_address(const std::string& address) {
  const size_t colon = address.rfind(':');
  char* end = nullptr;
  const unsigned long port = colon == std::string::npos ? 0 : std::strtoul(address.c_str() + colon + 1, &end, 10);
  if (colon == std::string::npos || colon == 0 || !end || *end || port == 0 || port > 65535)
    throw Error("dcuda: bad proxy address '" + address + "' (expected host:port)");
  return {address.substr(0, colon), static_cast<uint16_t>(port)};
}

}  // namespace

Proxy::Options Proxy::Options::from_env() {
  Options o;
  if (const char* h = std::getenv("DCUDA_PROXY_HOST"); h && *h) o.host = h;
  if (const char* p = std::getenv("DCUDA_PROXY_PORT"); p && *p) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(p, &end, 10);
    if (*end || v > 65535) throw Error(std::string("DCUDA_PROXY_PORT: not a port: ") + p);
    o.port = static_cast<uint16_t>(v);
  }
  if (const char* t = std::getenv("DCUDA_PROXY_STOP_TIMEOUT"); t && *t) {
    char* end = nullptr;
    o.stop_timeout_s = std::strtod(t, &end);
    if (*end || !(o.stop_timeout_s > 0)) throw Error(std::string("DCUDA_PROXY_STOP_TIMEOUT: not a positive number: ") + t);
  }
  return o;
}

struct Proxy::Impl {
  Options options;
  std::string key, address;
  Context c;
  std::unique_ptr<tp::Worker> worker;
  std::unique_ptr<Outgoing> out;
  std::unique_ptr<Incoming> in;
  std::unique_ptr<PeerWindows> windows;
  std::unique_ptr<WorldBarrier> barrier;
  std::unordered_map<tp::PeerId, uint32_t> out_of, in_of;  // connection -> process
  std::unordered_set<tp::PeerId> greeting;                 // incoming, hello not yet seen
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::atomic<bool> busy{false};  // a kernel of ours runs: never sleep
  std::atomic<uint64_t> sent{0}, applied{0}, refused{0}, turned_away{0};
  // stop()
  bool finished_sent = false;
  uint64_t stop_deadline = 0;
  bool closed = false;  // finished, or being destroyed: the worker's late events are ignored

  // The worker goes first: its destructor may still complete sends, whose callbacks use `out`.
  ~Impl() {
    closed = true;
    worker.reset();
  }

  explicit Impl(Options o) : options(std::move(o)) {
    const auto nonce = outboard::random_nonce();
    key = hex(nonce);
    tp::Events ev;
    ev.on_connect = [this](tp::PeerId id, const std::string&) {
      if (!closed) greeting.insert(id);
    };
    ev.on_disconnect = [this](tp::PeerId id, const std::string& reason) {
      if (!closed) gone(id, reason);
    };
    ev.on_payload = [this](tp::PeerId id, std::span<const std::byte> header, uint64_t bytes) {
      // Also before the connection's hello is handled: the hello may wait in the same round of
      // progress as this arrival. Who sent it is checked on delivery, after the hello.
      return closed || (!in_of.count(id) && !greeting.count(id)) ? tp::Landing::refuse() : in->landing(header, bytes);
    };
    ev.on_message = [this](tp::PeerId id, std::vector<std::byte> header, tp::Buffer payload, bool refused) {
      if (!closed) on_message(id, header, std::move(payload), refused);
    };
    worker = std::make_unique<tp::Worker>(std::move(ev));
    const uint16_t port = worker->listen(options.host, options.port);
    std::string host = options.host;
    if (host.empty() || host == "0.0.0.0" || host == "::") {  // listening everywhere: publish our name
      char name[256] = {};
      gethostname(name, sizeof name - 1);
      host = name;
    }
    address = host + ":" + std::to_string(port);
  }

  void on_message(tp::PeerId id, std::span<const std::byte> header, tp::Buffer payload, bool payload_refused) {
    if (greeting.count(id)) return hello(id, header, payload_refused || payload.size());
    const auto in_it = in_of.find(id);
    const auto out_it = out_of.find(id);
    if (in_it == in_of.end() && out_it == out_of.end()) return;  // closed meanwhile
    const bool incoming = in_it != in_of.end();
    const uint32_t p = incoming ? in_it->second : out_it->second;
    try {
      msg::Message m = msg::decode(header);
      if (auto* put = std::get_if<msg::Put>(&m); put && incoming) return in->on_put(p, *put, std::move(payload), payload_refused);
      if (payload_refused || payload.size()) throw ProtocolError("a payload on a message that carries none");
      if (auto* e = std::get_if<msg::Error>(&m)) return c.fail(c.rank_range(p) + " reports: " + e->reason);
      if (incoming) {
        if (auto* a = std::get_if<msg::Arrive>(&m)) return barrier->on_arrive(p, a->generation, a->windows);
        if (auto* w = std::get_if<msg::Window>(&m)) return windows->on_window(p, *w);
        if (std::holds_alternative<msg::Finished>(m)) {
          c.peers[p].finished = true;
          c.send(id, msg::Finished{});  // the answer: we have it
          return;
        }
      } else {
        if (auto* a = std::get_if<msg::Ack>(&m)) return out->on_ack(p, *a);
        if (auto* f = std::get_if<msg::Refused>(&m)) return out->on_refused(p, *f);
        if (std::holds_alternative<msg::Welcome>(m)) {
          c.peers[p].out_ready = true;
          return;
        }
        if (std::holds_alternative<msg::Finished>(m)) {
          c.peers[p].took_finish = true;
          return;
        }
      }
      throw ProtocolError("a message of a kind that this connection does not carry");
    } catch (const ProtocolError& e) {
      c.fail(c.rank_range(p) + " broke the protocol: " + e.what() + " (connection closed)");
      hang_up(id, e.what());
      gone(id, "closed for a protocol violation", /*reported=*/true);
    }
  }

  // Says why, then closes the connection once that is sent. A courtesy: on a connection that is
  // new, UCX may still drop it on closing (seen with 1.13); the record here is what counts.
  void hang_up(tp::PeerId id, const std::string& why) {
    c.send(id, msg::Error{why}, nullptr, 0, [this, id](bool) {
      if (!closed) worker->close(id, false);
    });
  }

  // The first message of an incoming connection: who it is, proven by our key.
  void hello(tp::PeerId id, std::span<const std::byte> header, bool has_payload) {
    greeting.erase(id);
    std::string why;
    uint32_t p = 0;
    try {
      const msg::Message m = msg::decode(header);
      const auto* h = std::get_if<msg::Hello>(&m);
      if (!h || has_payload) throw ProtocolError("the first message is not a hello");
      p = h->process;
      if (p >= c.processes() || p == c.self()) throw ProtocolError("no process " + std::to_string(p) + " to greet");
      if (!same_key(h->key, key)) throw ProtocolError("wrong key");
      if (c.peers[p].in || c.peers[p].in_lost) throw ProtocolError("process " + std::to_string(p) + " connected twice");
    } catch (const ProtocolError& e) {
      why = e.what();
    }
    if (!why.empty()) {
      // Not one of the run (or a broken one, which fails on its own side): turned away, not fatal.
      std::fprintf(stderr, "dcuda proxy: turned away a connection: %s\n", why.c_str());
      ++turned_away;
      hang_up(id, "turned away: " + why);
      return;
    }
    in_of[id] = p;
    c.peers[p].in = id;
    in->open(p);
    c.send(id, msg::Welcome{});
  }

  // A connection is gone (failed, closed by the peer, or closed by us for a violation).
  void gone(tp::PeerId id, const std::string& reason, bool reported = false) {
    greeting.erase(id);
    if (auto it = in_of.find(id); it != in_of.end()) {
      const uint32_t p = it->second;
      in_of.erase(it);
      c.peers[p].in_lost = true;
      if (!c.peers[p].finished && !reported) c.fail(c.rank_range(p) + " disconnected before it finished: " + reason);
    } else if (auto it = out_of.find(id); it != out_of.end()) {
      const uint32_t p = it->second;
      out_of.erase(it);
      c.peers[p].out_lost = true;
      const size_t unanswered = out->on_peer_lost(p);
      if (reported) return;
      if (unanswered)
        c.fail("lost the connection to " + c.rank_range(p) + " with " + std::to_string(unanswered) +
               " commands unanswered: " + reason);
      else if (!finished_sent && !c.peers[p].finished)
        c.fail("lost the connection to " + c.rank_range(p) + ": " + reason);
    }
  }

  void start(const World& world, detail::RankHost* host, detail::RankDevice* device, DeviceLink& link,
             const PeerPaths& paths) {
    if (thread.joinable() || out) throw Error("dcuda proxy: started twice");
    if (world.self >= world.processes.size() || world.processes[world.self].ranks == 0 || !host || !device)
      throw Error("dcuda proxy: start() with no ranks of our own");
    c.worker = worker.get();
    c.link = &link;
    c.world = world;
    c.host = host;
    c.device = device;
    c.peers.assign(world.processes.size(), Peer{});
    c.same_host.assign(world.processes.size(), 0);
    c.mapped.assign(world.processes.size(), 0);
    for (uint32_t p = 0; p < world.processes.size(); ++p) {
      c.same_host[p] = p < paths.same_host.size() && paths.same_host[p];
      c.mapped[p] = c.same_host[p] && p < paths.mapped.size() && paths.mapped[p];
    }
    c.peer_windows = paths.windows;
    out = std::make_unique<Outgoing>(c);
    in = std::make_unique<Incoming>(c);
    windows = std::make_unique<PeerWindows>(c);
    barrier = std::make_unique<WorldBarrier>(c, *windows);
    out->on_barrier = [this](uint32_t r, uint32_t g) { barrier->local(r, g); };
    for (uint32_t p = 0; p < world.processes.size(); ++p) {
      if (p == world.self) continue;
      const auto [h, port] = split_address(world.processes[p].address);
      const tp::PeerId id = worker->connect(h, port);
      out_of[id] = p;
      c.peers[p].out = id;
      // Nothing more until its welcome: UCX (1.13) may replay sends queued while a new
      // endpoint is wired up with a protocol its final lane cannot carry, and lose them
      // ("Invalid am_short_iov length", openucx/ucx#6872); after one round trip it never did.
      c.send(id, msg::Hello{world.self, world.processes[p].key});
    }
    thread = std::thread([this] { run(); });
  }

  void run() {
    uint64_t idle_since = outboard::now_ns();
    for (;;) {
      bool any = false;
      try {
        any |= worker->progress();
        any |= c.link->poll();
        any |= out->poll();
        any |= barrier->poll(out->all_delivered());
        in->flush_acks();
        sent.store(out->sent(), std::memory_order_relaxed);
        applied.store(in->applied(), std::memory_order_relaxed);
        refused.store(in->refused(), std::memory_order_relaxed);
        if (stopping.load(std::memory_order_acquire) && finish()) {
          c.trace.print(stderr, "dcuda proxy trace, " + c.rank_range(c.self()));
          return void(closed = true);
        }
      } catch (const std::exception& e) {
        c.fail(std::string("proxy: ") + e.what());
      }
      // Rings are polled: spin while work flows (and a little after, where cores are spare), then
      // look again every few microseconds.
      const uint64_t now = outboard::now_ns();
      if (any)
        idle_since = now;
      else if (busy.load(std::memory_order_relaxed))
        outboard::pause_core(8);
      else if (now - idle_since > outboard::spare_core_poll_ns())
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  // One step of stop(); true once the proxy may close.
  bool finish() {
    const uint64_t now = outboard::now_ns();
    if (!stop_deadline) stop_deadline = now + static_cast<uint64_t>(options.stop_timeout_s * 1e9);
    std::string waiting;
    if (!finished_sent) {
      if (!out->drained()) {
        waiting = "answers to our commands";
      } else if (!c.all_ready()) {
        waiting = "connections to be set up";
      } else {
        for (uint32_t p = 0; p < c.processes(); ++p) {
          if (p == c.self() || c.peers[p].out_lost) continue;
          c.send(c.peers[p].out, msg::Finished{});
        }
        finished_sent = true;
      }
    }
    if (finished_sent) {
      // Closing before a peer has our `finished` could make it see us vanish mid-run.
      for (uint32_t p = 0; p < c.processes(); ++p) {
        if (p == c.self()) continue;
        if (!c.peers[p].finished && !c.peers[p].in_lost)
          waiting += (waiting.empty() ? "" : ", ") + c.rank_range(p) + " to finish";
        else if (!c.peers[p].took_finish && !c.peers[p].out_lost)
          waiting += (waiting.empty() ? "" : ", ") + c.rank_range(p) + " to take our finish";
      }
      if (!c.link->idle()) waiting += (waiting.empty() ? "" : ", ") + std::string("the device link");
    }
    if (!waiting.empty() && now < stop_deadline) return false;
    if (!waiting.empty())
      c.fail("stopping: gave up after " + std::to_string(options.stop_timeout_s) + " s waiting for " + waiting);
    for (auto& [id, p] : out_of) worker->close(id, false);
    for (auto& [id, p] : in_of) worker->close(id, false);
    out_of.clear();
    in_of.clear();
    return true;
  }
};

Proxy::Proxy(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Proxy::~Proxy() {
  try {
    stop();
  } catch (...) {
  }
}

std::string Proxy::address() const { return impl_->address; }
std::string Proxy::key() const { return impl_->key; }

void Proxy::start(const World& world, detail::RankHost* host, detail::RankDevice* device, DeviceLink& link,
                  const PeerPaths& paths) {
  impl_->start(world, host, device, link, paths);
}

void Proxy::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->stopping.store(true, std::memory_order_release);
  impl_->thread.join();
}

void Proxy::set_busy(bool busy) { impl_->busy.store(busy, std::memory_order_relaxed); }

std::string Proxy::error() const { return impl_->c.error(); }

Proxy::Stats Proxy::stats() const {
  return {impl_->sent.load(), impl_->applied.load(), impl_->refused.load(), impl_->c.failures(), impl_->turned_away.load()};
}

}  // namespace dcuda::runtime
