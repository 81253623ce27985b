// UCX (ucp) implementation of transport::Worker.
//
// UCX callbacks (active message arrival, send/receive completion, endpoint errors, incoming
// connections) only record what happened; the events are delivered to the upper layer from
// progress(), after ucp_worker_progress() has returned, so upper-layer handlers may freely send or
// close without re-entering UCX. Two exceptions, both documented in transport.hpp: on_payload runs
// inside the arrival (it only decides where the payload goes, or consumes the message), and a
// plain SendDone runs inside send() when UCX completes the send at once.
//
// The streaming path allocates nothing per message: send and receive records are pooled, headers
// are stored inline, events go into a vector that keeps its capacity, and a consumed (discarded)
// eager payload is never copied out of UCX's buffer.
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <spdlog/spdlog.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "common/call_log.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "transport/lane_threads.hpp"
#include "transport/receive_probe.hpp"
#include "transport/seal.hpp"
#include "transport/transport.hpp"
#include "transport/ucx.hpp"

namespace outboard::transport {
namespace {

constexpr unsigned kAmId = 0;  // the messages' active-message id: the header says what the message is
constexpr unsigned kFirstSinkId = 1;  // sinks' ids follow (Worker::open_sink)
// Every id a peer can name: UCX carries an active message's id in 16 bits. Each has a handler
// from the start (Worker::Worker says why).
constexpr unsigned kAmIds = 1u << 16;
// How long a worker being destroyed waits for its closes and cancelled sends to finish.
constexpr uint64_t kCloseGraceNs = 500'000'000;

std::string ucs_text(const Ucx& ucx, ucs_status_t s) { return ucx.ucs_status_string(s); }

void check(const Ucx& ucx, ucs_status_t s, const char* what) {
  if (s != UCS_OK) throw Error(std::string(what) + ": " + ucs_text(ucx, s));
}

std::string sockaddr_text(const sockaddr_storage& ss) {
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&ss), sizeof ss, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  return std::string(host) + ":" + serv;
}

sockaddr_storage resolve(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0 || !res) throw Error("cannot resolve address '" + host + "': " + gai_strerror(rc));
  sockaddr_storage ss{};
  std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return ss;
}

// Whether UCX_TLS lets UCX use any of these transports: one of them listed (or "all"), or, in a
// list of exclusions ("^..."), one of them not excluded.
bool tls_allows(std::initializer_list<const char*> names) {
  const char* tls = std::getenv("UCX_TLS");
  if (!tls || !*tls) return true;
  std::string list = tls;
  const bool exclude = list.front() == '^';
  if (exclude) list.erase(0, 1);
  std::vector<std::string> items;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    items.push_back(list.substr(pos, comma - pos));
    pos = comma + 1;
  }
  auto listed = [&](const char* n) { return std::find(items.begin(), items.end(), n) != items.end(); };
  if (!exclude && listed("all")) return true;
  for (const char* n : names)
    if (listed(n) != exclude) return true;
  return false;
}

// A UCX option, given through the environment (set through ucp_config_modify, UCX warns on
// stdout when a transport it configures is not in use) and only where that transport may be used.
// The user's own UCX_<name> wins. In the instance's environment: a fresh instance (ucx.hpp) has
// a C library of its own.
void default_ucx_setting(const Ucx& ucx, const char* name, const char* value,
                         std::initializer_list<const char*> transports) {
  if (tls_allows(transports)) ucx.default_setting(name, value);
}

// Sets a UCX option unless the user's environment already does (UCX_<name>).
void set_default(const Ucx& ucx, ucp_config_t* config, const char* name, const char* value) {
  if (std::getenv((std::string("UCX_") + name).c_str())) return;
  ucs_status_t s = ucx.ucp_config_modify(config, name, value);
  if (s != UCS_OK) throw Error(std::string("UCX option ") + name + ": " + ucs_text(ucx, s));
}

socklen_t sockaddr_len(const sockaddr_storage& ss) {
  return ss.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

}  // namespace

struct Worker::Impl {
  struct Peer {
    Impl* impl;
    PeerId id;
    ucp_ep_h ep;
    // A message from the peer has arrived: only then may sinks be sent to. UCX 1.13 replays sends
    // queued while an endpoint is still being wired up with a protocol the final lane may not
    // carry ("Invalid am_short_iov length", openucx/ucx#6872); sink sends hit that and fail,
    // messages with a header did not in our tests. After a round trip they never did.
    bool wired = false;
    std::unique_ptr<Seal> seal{};  // protected (Worker::protect): every message sealed
    bool faulted = false;        // a sealed message failed: what else arrives is dropped
  };
  // A sink's active-message handler argument; lives as long as the worker (its handler, which
  // replaced the stray one on_stray_am, stays registered: a closed sink's stragglers are dropped
  // here, not warned about by UCX).
  struct Sink {
    Impl* impl;
    uint32_t id;
    PeerId peer;  // 0: closed
  };
  // One send in flight. Pooled: a free list, so steady-state sending allocates nothing. The
  // header lives inline unless it is long (handshake and status messages).
  struct SendOp {
    static constexpr size_t kInlineHeader = 192;
    static constexpr size_t kInlineIov = 4;
    Impl* impl = nullptr;
    PeerId peer = 0;
    SendOp* prev = nullptr;  // in `sends` while in flight; `next` also links the free list
    SendOp* next = nullptr;
    size_t header_len = 0;
    alignas(8) std::byte header_inline[kInlineHeader];
    std::vector<std::byte> header_long;
    ucp_dt_iov_t iov_inline[kInlineIov];
    std::vector<ucp_dt_iov_t> iov_long;
    std::function<void(bool)> done;
    SendDone plain;
    bool abandoned = false;  // given up on as the worker goes; UCX may still call back for it
    Buffer sealed;           // a protected peer's payload, sealed: what UCX sends

    const std::byte* header() const { return header_len <= kInlineHeader ? header_inline : header_long.data(); }
    bool has_done() const { return done || plain.fn; }
    void complete(bool ok) {
      if (plain.fn) plain.fn(plain.arg, ok);
      else if (done) done(ok);
    }
  };
  // One rendezvous receive in flight; pooled like SendOp.
  struct RecvOp {
    Impl* impl = nullptr;
    PeerId peer = 0;
    RecvOp* prev = nullptr;  // in `recvs` while in flight; `next` also links the free list
    RecvOp* next = nullptr;
    std::vector<std::byte> header;
    Buffer buffer;
    bool discard = false;  // received into scratch memory only so that the sender completes
    bool abandoned = false;  // as SendOp's
    // A protected peer's payload: `buffer` holds the sealed bytes, opened into `landing` once
    // they are all there.
    bool sealed = false;
    bool verify_only = false;  // a discarded payload: opened (in place) to check it, not delivered
    uint64_t counter = 0, plain_bytes = 0;
    Buffer landing;
  };
  // What UCX callbacks record, delivered from progress().
  struct Event {
    enum class Kind : uint8_t { message, send_done, borrowed_done, peer_failed, peer_fault };
    Kind kind;
    bool flag;  // message: payload refused; send_done, borrowed_done: ok
    PeerId peer;
    ucs_status_t status;  // peer_failed
    SendOp* op;           // send_done
    std::vector<std::byte> header;
    Buffer payload;
    const SendDone* borrowed = nullptr;  // borrowed_done
    std::string reason{};                // peer_fault
  };

  // An arrival waiting for its landing (keep_arrival), by ticket.
  struct Arrival {
    PeerId peer = 0;
    std::vector<std::byte> header;
    size_t len = 0;
    bool rndv = false;
    void* data = nullptr;          // rendezvous: UCX's descriptor, held
    std::vector<std::byte> eager;  // eager: the bytes, copied
  };
  std::unordered_map<uint64_t, Arrival> arrivals;
  uint64_t next_ticket = 0;

  Events events;
  Options options;
  Worker* owner_worker = nullptr;
  const Ucx* ucx = nullptr;  // the UCX instance that made context and worker (ucx.hpp)
  pid_t owner = 0;           // the process that made them: a forked child leaves them alone
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  ucp_listener_h listener = nullptr;
  int ucx_fd = -1;     // UCX's wakeup fd, -1 if the transports offer none
  int signal_fd = -1;  // our own eventfd for signal(): always thread-safe
  PeerId next_peer = 1;
  std::unordered_map<PeerId, std::unique_ptr<Peer>> peers;
  std::unordered_map<ucp_ep_h, Peer*> peer_of_ep;  // the Peer is in `peers`
  std::vector<ucp_conn_request_h> incoming;
  std::vector<Event> deferred, delivering;  // two, swapped: capacity is kept, so no allocation
  SendOp sends;                             // sentinel of the in-flight list
  SendOp* free_ops = nullptr;
  size_t free_count = 0;
  static constexpr size_t kMaxFreeOps = 1024;
  // Borrowed sends UCX has yet to finish, oldest first; finished ones leave a gap (done = nullptr)
  // until they reach the front. They finish mostly in order, so finding one is mostly one step.
  std::deque<std::pair<void*, const SendDone*>> borrowed;
  RecvOp recvs;  // sentinel of the in-flight list
  RecvOp* free_recvs = nullptr;
  Buffer scratch;              // where discarded rendezvous payloads land; contents never read
  std::vector<std::byte> verify_scratch;  // where a protected peer's discarded eager payloads are opened
  std::vector<Buffer> old_scratch;
  size_t scratch_users = 0;    // discarded rendezvous payloads being received
  // Rounds in a row with nothing of ours happening and no UCX progress that can be a
  // connection's work (Worker::progress). Past kIdleRoundsBeforeSleep, wait() sleeps kBusySleepMs
  // when UCX will not arm its wakeup, rather than return at once; kLongBusySleepMs once that has
  // lasted kLongSleepAfter rounds more (about a second: no stalled reader, a stuck endpoint).
  static constexpr unsigned kIdleRoundsBeforeSleep = 1000;
  static constexpr unsigned kLongSleepAfter = 200;
  static constexpr int kBusySleepMs = 5;
  static constexpr int kLongBusySleepMs = 20;
  unsigned idle_rounds = 0;  // up to kIdleRoundsBeforeSleep + kLongSleepAfter
  int busy_sleep_ms() const { return idle_rounds < kIdleRoundsBeforeSleep + kLongSleepAfter ? kBusySleepMs : kLongBusySleepMs; }
  bool warned_empty_progress = false, warned_busy_arm = false;
  std::vector<std::unique_ptr<Sink>> sinks;    // by id - kFirstSinkId
  std::deque<uint32_t> free_sinks;             // closed ids, longest closed first
  std::unordered_map<PeerId, uint32_t> sink_of_peer;
  std::unique_ptr<LaneThreads> lanes;   // made at the first listen_lanes() or connect_lane()
  LaneThreads& lane_threads() {
    if (!lanes) lanes = std::make_unique<LaneThreads>([w = owner_worker] { w->signal(); }, options);
    return *lanes;
  }
  std::unique_ptr<ReceiveProbe> probe;  // made at the first receiving() call
  bool probe_unavailable = false;       // it could not be made: receiving() says true

  Impl() {
    sends.prev = sends.next = &sends;
    recvs.prev = recvs.next = &recvs;
  }

  RecvOp* new_recv() {
    RecvOp* op = free_recvs;
    if (op) free_recvs = op->next;
    else op = new RecvOp, op->impl = this;
    op->prev = &recvs;
    op->next = recvs.next;
    recvs.next->prev = op;
    recvs.next = op;
    return op;
  }

  void free_recv(RecvOp* op) {
    op->prev->next = op->next;
    op->next->prev = op->prev;
    op->header.clear();
    op->buffer = Buffer();
    op->landing = Buffer();
    op->sealed = op->verify_only = false;
    op->next = free_recvs;  // receives in flight at once are few: the pool stays small
    free_recvs = op;
  }

  SendOp* new_send() {
    SendOp* op = free_ops;
    if (op) {
      free_ops = op->next;
      --free_count;
    } else {
      op = new SendOp;
      op->impl = this;
    }
    op->prev = &sends;  // link in flight
    op->next = sends.next;
    sends.next->prev = op;
    sends.next = op;
    return op;
  }

  void free_send(SendOp* op) {
    op->prev->next = op->next;  // unlink from in flight
    op->next->prev = op->prev;
    op->done = nullptr;
    op->plain = {};
    op->sealed = Buffer();
    if (op->header_long.capacity() > 4096) std::vector<std::byte>().swap(op->header_long);
    if (free_count >= kMaxFreeOps) {
      delete op;
      return;
    }
    op->next = free_ops;
    free_ops = op;
    ++free_count;
  }

  ~Impl() {
    while (free_ops) {
      SendOp* op = free_ops;
      free_ops = op->next;
      delete op;
    }
    while (free_recvs) {
      RecvOp* op = free_recvs;
      free_recvs = op->next;
      delete op;
    }
  }

  // ---- UCX callbacks: record only ----
  static void on_conn_request(ucp_conn_request_h req, void* arg) { static_cast<Impl*>(arg)->incoming.push_back(req); }

  static void on_ep_error(void* arg, ucp_ep_h, ucs_status_t status) {
    auto* peer = static_cast<Peer*>(arg);
    Event e{Event::Kind::peer_failed, false, peer->id, status, nullptr, {}, {}};
    peer->impl->deferred.push_back(std::move(e));
  }

  static void on_send_done(void* request, ucs_status_t status, void* user) {
    auto* op = static_cast<SendOp*>(user);
    op->impl->ucx->ucp_request_free(request);
    if (op->abandoned) return;  // ucp_worker_destroy purging it: the worker's destructor frees op
    op->impl->finish_send(op, status == UCS_OK);
  }

  // A borrowed send UCX finished later than the call: its completion runs from progress().
  static void on_borrowed_done(void* request, ucs_status_t status, void* user) {
    auto* self = static_cast<Impl*>(user);
    self->ucx->ucp_request_free(request);
    auto& b = self->borrowed;
    for (auto& [r, done] : b)
      if (r == request && done) {
        self->finish_borrowed(done, status == UCS_OK);
        done = nullptr;
        break;
      }
    while (!b.empty() && !b.front().second) b.pop_front();
  }
  void finish_borrowed(const SendDone* done, bool ok) {
    Event e{Event::Kind::borrowed_done, ok, 0, UCS_OK, nullptr, {}, {}};
    e.borrowed = done;
    deferred.push_back(std::move(e));
  }

  static void on_recv_done(void* request, ucs_status_t status, size_t, void* user) {
    auto* op = static_cast<RecvOp*>(user);
    op->impl->ucx->ucp_request_free(request);
    if (op->abandoned) return;
    op->impl->finish_recv(op, status == UCS_OK);
  }

  static ucs_status_t on_am(void* arg, const void* header, size_t header_len, void* data, size_t len,
                            const ucp_am_recv_param_t* param) {
    if (trace::CallLog::enabled()) trace::last_arrival_ns = now_ns();
    auto* self = static_cast<Impl*>(arg);
    const bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    PeerId peer = 0;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) {
      auto it = self->peer_of_ep.find(param->reply_ep);
      if (it != self->peer_of_ep.end()) peer = it->second->id, it->second->wired = true;
    }
    // Returning UCS_OK without receiving drops the data (a rendezvous descriptor too).
    if (peer == 0) return UCS_OK;  // from an endpoint we no longer know (closed)
    std::span<const std::byte> hdr(static_cast<const std::byte*>(header), header_len);
    if (Peer& p = *self->peers.at(peer); p.seal || p.faulted) return self->on_sealed_am(p, hdr, data, len, rndv);
    if (len == 0) {
      self->deliver(peer, hdr, Buffer{}, false);
      return UCS_OK;
    }
    if (self->events.on_payload_later) return self->keep_arrival(peer, hdr, data, len, rndv);
    Landing landing;
    if (self->events.on_payload) {
      try {
        landing = self->events.on_payload(peer, hdr, len);
      } catch (...) {
        landing = Landing::refuse();
      }
    }
    self->land_payload(peer, hdr, data, len, rndv, std::move(landing), /*held=*/false);
    return UCS_OK;
  }

  // Puts an arriving payload where `landing` says. `data`: the eager bytes, or the rendezvous
  // descriptor. `held`: the descriptor outlived its callback (keep_arrival), so one not received
  // is released here; inside the callback returning UCS_OK drops it.
  void land_payload(PeerId peer, std::span<const std::byte> hdr, void* data, size_t len, bool rndv, Landing landing,
                    bool held) {
    auto drop = [&] {
      if (held && rndv) ucx->ucp_am_data_release(worker, data);
    };
    Buffer dst;
    switch (landing.action()) {
      case Landing::Action::discard:
        if (!rndv) return;  // eager: the data stays where it arrived, untouched
        dst = scratch_for(len);
        if (!dst.data()) {
          drop();
          deliver(peer, hdr, Buffer{}, true);  // refused after all
          return;
        }
        break;
      case Landing::Action::receive:
        dst = std::move(landing.buffer());
        if (dst.size() >= len) break;
        [[fallthrough]];
      case Landing::Action::refuse:
        drop();
        deliver(peer, hdr, Buffer{}, true);
        return;
    }
    const bool discard = landing.action() == Landing::Action::discard;
    if (!rndv) {  // eager: the data is only valid during the callback (or is our copy of it)
      std::memcpy(dst.data(), data, len);
      deliver(peer, hdr, std::move(dst), false);
      return;
    }
    receive(peer, data, len, std::move(dst), discard ? std::span<const std::byte>() : hdr, discard);
  }

  // An arrival whose landing is decided later (Events::on_payload_later, Worker::land): a
  // rendezvous descriptor is held (UCS_INPROGRESS), eager bytes are copied (they live only as
  // long as the callback).
  ucs_status_t keep_arrival(PeerId peer, std::span<const std::byte> hdr, void* data, size_t len, bool rndv) {
    const uint64_t ticket = ++next_ticket;
    Arrival& a = arrivals[ticket];
    a.peer = peer;
    a.header.assign(hdr.begin(), hdr.end());
    a.len = len;
    a.rndv = rndv;
    if (rndv) a.data = data;
    else a.eager.assign(static_cast<const std::byte*>(data), static_cast<const std::byte*>(data) + len);
    try {
      events.on_payload_later(peer, hdr, len, ticket);
    } catch (...) {
      arrivals.erase(ticket);
      deliver(peer, hdr, Buffer{}, true);
      return UCS_OK;
    }
    return rndv ? UCS_INPROGRESS : UCS_OK;
  }

  void land(uint64_t ticket, Landing landing) {
    auto it = arrivals.find(ticket);
    if (it == arrivals.end()) return;  // its peer went (drop_arrivals)
    Arrival a = std::move(it->second);
    arrivals.erase(it);
    void* data = a.rndv ? a.data : a.eager.data();
    land_payload(a.peer, a.header, data, a.len, a.rndv, std::move(landing), /*held=*/true);
  }

  // The arrivals of `peer` still waiting for their landing (every peer's: 0), released.
  void drop_arrivals(PeerId peer) {
    for (auto it = arrivals.begin(); it != arrivals.end();) {
      if (peer != 0 && it->second.peer != peer) {
        ++it;
        continue;
      }
      if (it->second.rndv) ucx->ucp_am_data_release(worker, it->second.data);
      it = arrivals.erase(it);
    }
  }

  // A protected peer's message: its header is opened here, as it arrives (so in the order sent),
  // its payload once it has landed (finish_recv), or here when it came eagerly.
  ucs_status_t on_sealed_am(Peer& p, std::span<const std::byte> sealed_hdr, void* data, size_t len, bool rndv) {
    if (p.faulted) return UCS_OK;  // the connection is ending: dropped
    std::vector<std::byte> hdr;
    Seal::Opened o;
    try {
      o = p.seal->open_header(sealed_hdr, hdr);
      if (len != (o.payload_bytes ? sealed_payload_bytes(o.payload_bytes) : 0))
        throw SealError("message " + std::to_string(o.counter) + " carries " + std::to_string(len) +
                        " payload bytes, not the sealed size of the " + std::to_string(o.payload_bytes) +
                        " it announces (truncated?)");
    } catch (const SealError& e) {
      fault(p, e.what());
      return UCS_OK;
    }
    if (o.payload_bytes == 0) {
      deliver(p.id, std::move(hdr), Buffer{}, false);
      return UCS_OK;
    }
    Landing landing;
    if (events.on_payload) {
      try {
        landing = events.on_payload(p.id, hdr, o.payload_bytes);
      } catch (...) {
        landing = Landing::refuse();
      }
    }
    switch (landing.action()) {
      case Landing::Action::discard: {
        // Consumed by its header; the payload is still opened (every tag is checked), then dropped.
        if (!rndv) {
          verify_scratch.resize(o.payload_bytes);
          try {
            p.seal->open_payload(o.counter, {static_cast<const std::byte*>(data), len}, o.payload_bytes,
                                 verify_scratch.data());
          } catch (const SealError& e) {
            fault(p, e.what());
          }
          return UCS_OK;
        }
        return receive_sealed(p, std::move(hdr), o, data, len, Buffer{}, /*verify_only=*/true);
      }
      case Landing::Action::receive:
        if (landing.buffer().size() >= o.payload_bytes) break;
        [[fallthrough]];
      case Landing::Action::refuse:
        deliver(p.id, std::move(hdr), Buffer{}, true);
        return UCS_OK;
    }
    Buffer dst = std::move(landing.buffer());
    if (!rndv) {  // eager: opened straight from where it arrived into the landing buffer
      try {
        p.seal->open_payload(o.counter, {static_cast<const std::byte*>(data), len}, o.payload_bytes, dst.data());
      } catch (const SealError& e) {
        fault(p, e.what());
        return UCS_OK;
      }
      deliver(p.id, std::move(hdr), std::move(dst), false);
      return UCS_OK;
    }
    return receive_sealed(p, std::move(hdr), o, data, len, std::move(dst), /*verify_only=*/false);
  }

  // A sealed rendezvous payload: pulled whole into memory of its own, then opened (finish_recv)
  // into `landing`, or only checked (verify_only: a discarded payload, whose header was consumed
  // and is not delivered again). No memory for it: the message is delivered refused.
  ucs_status_t receive_sealed(Peer& p, std::vector<std::byte> hdr, const Seal::Opened& o, void* data, size_t len,
                              Buffer landing, bool verify_only) {
    Buffer wire;
    try {
      wire = Buffer::allocate(len);
    } catch (const std::bad_alloc&) {
      deliver(p.id, std::move(hdr), Buffer{}, true);
      return UCS_OK;
    }
    RecvOp* op = receive(p.id, data, len, std::move(wire), verify_only ? std::span<const std::byte>() : hdr, false,
                         /*start=*/false);
    op->sealed = true;
    op->verify_only = verify_only;
    op->counter = o.counter;
    op->plain_bytes = o.payload_bytes;
    op->landing = std::move(landing);
    start_receive(op, data, len);
    return UCS_OK;
  }

  // A protected peer sent what cannot be opened: the connection ends with why, from progress().
  void fault(Peer& p, const std::string& why) {
    if (p.faulted) return;
    p.faulted = true;
    Event e{Event::Kind::peer_fault, false, p.id, UCS_OK, nullptr, {}, {}};
    e.reason = "encrypted session: " + why;
    deferred.push_back(std::move(e));
  }

  // A message to an id that is not (or not yet) in use: dropped. Returning UCS_OK without
  // receiving completes a rendezvous sender's transfer as if it had happened.
  static ucs_status_t on_stray_am(void*, const void*, size_t, void*, size_t, const ucp_am_recv_param_t*) {
    return UCS_OK;
  }

  // A sink's message: no header, no reply endpoint; the handler's argument says whose it is.
  static ucs_status_t on_sink_am(void* arg, const void*, size_t, void* data, size_t len,
                                 const ucp_am_recv_param_t* param) {
    auto* sink = static_cast<Sink*>(arg);
    Impl* self = sink->impl;
    // Closed (sent before its peer went), or refused: dropped. Careful with rendezvous: a
    // descriptor dropped unreceived completes the sender's transfer as if it had happened.
    if (sink->peer == 0) return UCS_OK;
    bool take = false;
    if (self->events.on_sink) {
      try {
        take = self->events.on_sink(sink->peer, len);
      } catch (...) {
      }
    }
    if (!take || !(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) return UCS_OK;  // eager: left where it arrived
    // Rendezvous: pulled for real, so the sender's time is the transfer's.
    Buffer dst = self->scratch_for(len);
    if (!dst.data()) {  // the transfer cannot be made: the peer is told by losing its connection
      self->deferred.push_back(Event{Event::Kind::peer_failed, false, sink->peer, UCS_ERR_NO_MEMORY, nullptr, {}, {}});
      return UCS_OK;
    }
    self->receive(sink->peer, data, len, std::move(dst), {}, true);
    return UCS_OK;
  }

  // Where a discarded rendezvous payload of `len` bytes lands (contents never read): an empty
  // Buffer when there is no memory for it. The caller's receive() releases it.
  Buffer scratch_for(size_t len) {
    if (scratch.size() < len) {
      // Receives into the old scratch memory may still be in flight: it is kept until they end.
      if (scratch_users) old_scratch.push_back(std::move(scratch));
      scratch = Buffer();
      try {
        scratch = Buffer::allocate(len);
      } catch (const std::bad_alloc&) {
        return Buffer();
      }
    }
    ++scratch_users;
    return Buffer::borrow(scratch.data(), len);
  }

  // Starts pulling a rendezvous payload into `dst`; finish_recv runs when it has landed.
  RecvOp* receive(PeerId peer, void* data, size_t len, Buffer dst, std::span<const std::byte> hdr, bool discard,
                  bool start = true) {
    RecvOp* op = new_recv();
    op->peer = peer;
    op->header.assign(hdr.begin(), hdr.end());
    op->buffer = std::move(dst);
    op->discard = discard;
    if (start) start_receive(op, data, len);
    return op;
  }
  void start_receive(RecvOp* op, void* data, size_t len) {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = on_recv_done;
    p.user_data = op;
    ucs_status_ptr_t r = ucx->ucp_am_recv_data_nbx(worker, data, op->buffer.data(), len, &p);
    if (r == nullptr)
      finish_recv(op, true);
    else if (UCS_PTR_IS_ERR(r))
      finish_recv(op, false);
  }

  // am_id: kAmId, or a sink's id.
  void send_borrowed(PeerId peer, unsigned am_id, std::span<const std::byte> header, const void* data, size_t bytes,
                     const SendDone* done) {
    idle_rounds = 0;  // as Worker::send_op
    auto it = peers.find(peer);
    // A sink only once the endpoint is wired up (see Peer::wired); never for a protected peer.
    if (it == peers.end() || (am_id != kAmId && (!it->second->wired || it->second->seal)))
      return finish_borrowed(done, false);
    if (it->second->seal) {  // sealed: the header and payload are copied (sealed) after all
      Segment seg{data, bytes};
      Worker* w = owner_worker;
      w->send_op(peer, header, {&seg, bytes ? size_t(1) : size_t(0)}, nullptr, *done);
      return;
    }
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    // Messages name their sender; sinks' do not: that footer (and the receiver's lookup of it)
    // is what a sink saves.
    p.flags = am_id == kAmId ? UCP_AM_SEND_FLAG_REPLY : 0;
    p.cb.send = on_borrowed_done;
    p.user_data = this;
    ucs_status_ptr_t r = ucx->ucp_am_send_nbx(it->second->ep, am_id, header.data(), header.size(), data, bytes, &p);
    if (r == nullptr)
      done->fn(done->arg, true);
    else if (UCS_PTR_IS_ERR(r))
      finish_borrowed(done, false);
    else
      borrowed.emplace_back(r, done);
  }

  uint32_t open_sink(PeerId peer) {
    if (!peers.count(peer)) throw Error("no such peer");
    if (peers.at(peer)->seal) throw Error("no sink for an encrypted session");
    if (auto it = sink_of_peer.find(peer); it != sink_of_peer.end()) return it->second;
    // New ids first: a closed sink's id comes back only once all are made, longest closed first,
    // so its stragglers are long gone (they would be counted against the new peer).
    Sink* sink = nullptr;
    if (sinks.size() < kMaxSinks) {
      auto made = std::make_unique<Sink>(Sink{this, static_cast<uint32_t>(kFirstSinkId + sinks.size()), 0});
      ucp_am_handler_param_t hp{};
      hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                      UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
      hp.id = made->id;
      hp.cb = on_sink_am;
      hp.arg = made.get();
      hp.flags = UCP_AM_FLAG_WHOLE_MSG;
      check(*ucx, ucx->ucp_worker_set_am_recv_handler(worker, &hp), "UCX active-message handler for a sink");
      sink = made.get();
      sinks.push_back(std::move(made));
    } else if (!free_sinks.empty()) {
      sink = sinks[free_sinks.front() - kFirstSinkId].get();
      free_sinks.pop_front();
    } else {
      throw Error("all " + std::to_string(kMaxSinks) + " sinks are open");
    }
    sink->peer = peer;
    sink_of_peer[peer] = sink->id;
    return sink->id;
  }

  void close_sink(PeerId peer) {
    auto it = sink_of_peer.find(peer);
    if (it == sink_of_peer.end()) return;
    sinks[it->second - kFirstSinkId]->peer = 0;
    free_sinks.push_back(it->second);
    sink_of_peer.erase(it);
  }

  // ---- event delivery (runs from progress()) ----
  void deliver(PeerId peer, std::span<const std::byte> hdr, Buffer payload, bool refused) {
    deliver(peer, std::vector<std::byte>(hdr.begin(), hdr.end()), std::move(payload), refused);
  }
  void deliver(PeerId peer, std::vector<std::byte> hdr, Buffer payload, bool refused) {
    deferred.push_back(Event{Event::Kind::message, refused, peer, UCS_OK, nullptr, std::move(hdr), std::move(payload)});
  }

  void finish_send(SendOp* op, bool ok) {
    if (!op->has_done()) {
      free_send(op);
      return;
    }
    deferred.push_back(Event{Event::Kind::send_done, ok, op->peer, UCS_OK, op, {}, {}});
  }

  void finish_recv(RecvOp* op, bool ok) {
    if (op->discard && --scratch_users == 0) old_scratch.clear();
    if (ok && !op->discard && op->sealed) {
      auto it = peers.find(op->peer);
      if (it != peers.end() && it->second->seal && !it->second->faulted) {
        try {
          it->second->seal->open_payload(op->counter, {op->buffer.data(), op->buffer.size()}, op->plain_bytes,
                                         op->verify_only ? op->buffer.data() : op->landing.data());
          if (!op->verify_only) deliver(op->peer, std::move(op->header), std::move(op->landing), false);
        } catch (const SealError& e) {
          fault(*it->second, e.what());
        }
      }
    } else if (ok && !op->discard) {
      deliver(op->peer, std::move(op->header), std::move(op->buffer), false);
    }
    free_recv(op);
    // A failed receive means the peer failed: its endpoint error reports that.
  }

  void accept_incoming() {
    auto reqs = std::move(incoming);
    incoming.clear();
    for (ucp_conn_request_h req : reqs) {
      ucp_conn_request_attr_t attr{};
      attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
      std::string addr = ucx->ucp_conn_request_query(req, &attr) == UCS_OK ? sockaddr_text(attr.client_address) : "?";
      PeerId id = next_peer++;
      auto peer = std::make_unique<Peer>(Peer{this, id, nullptr});
      ucp_ep_params_t p{};
      p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
      p.conn_request = req;
      p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      p.err_handler.cb = on_ep_error;
      p.err_handler.arg = peer.get();
      if (ucx->ucp_ep_create(worker, &p, &peer->ep) != UCS_OK) continue;  // UCX rejects the request itself
      peer_of_ep[peer->ep] = peer.get();
      peers[id] = std::move(peer);
      if (events.on_connect) events.on_connect(id, addr);
    }
  }

  // Forcefully closes a peer's endpoint; reports it upward unless the upper layer asked for it.
  void drop_peer(PeerId id, const std::string& reason, bool report, bool force = true) {
    auto it = peers.find(id);
    if (it == peers.end()) return;
    ucp_ep_h ep = it->second->ep;
    peer_of_ep.erase(ep);
    close_sink(id);
    drop_arrivals(id);
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t r = ucx->ucp_ep_close_nbx(ep, &p);
    // The Peer object is the error handler's argument: kept until its close has finished — the
    // next progress() frees it (not here: drop_peer may run inside a UCX callback that has it).
    retiring.push_back({std::move(it->second), r && !UCS_PTR_IS_ERR(r) ? r : nullptr});
    peers.erase(it);
    if (report && events.on_disconnect) events.on_disconnect(id, reason);
  }
  // Peers dropped, each with its endpoint's close request (null: the close ended at once).
  struct Retiring {
    std::unique_ptr<Peer> peer;
    void* close_request;
  };
  std::vector<Retiring> retiring;

  // Frees the peers whose close has ended. Each peer's own request decides: a peer whose close
  // ended at once used to wait for every other close in flight to end first (issue 33: a server
  // under steady connection churn held a Peer per connection ever made).
  void reap_retiring() {
    for (size_t i = 0; i < retiring.size();) {
      void* r = retiring[i].close_request;
      if (r && ucx->ucp_request_check_status(r) == UCS_INPROGRESS) {
        ++i;
        continue;
      }
      if (r) ucx->ucp_request_free(r);
      retiring[i] = std::move(retiring.back());
      retiring.pop_back();
    }
  }
  size_t closes_in_flight() const {
    return static_cast<size_t>(
        std::count_if(retiring.begin(), retiring.end(), [](const Retiring& x) { return x.close_request != nullptr; }));
  }

  void run(Event& e) {
    switch (e.kind) {
      case Event::Kind::message:
        if (events.on_message && peers.count(e.peer))
          events.on_message(e.peer, std::move(e.header), std::move(e.payload), e.flag);
        break;
      case Event::Kind::send_done: {
        SendOp* op = e.op;
        try {
          op->complete(e.flag);
        } catch (...) {
          free_send(op);
          throw;
        }
        free_send(op);
        break;
      }
      case Event::Kind::borrowed_done:
        e.borrowed->fn(e.borrowed->arg, e.flag);
        break;
      case Event::Kind::peer_failed:
        drop_peer(e.peer, "connection lost: " + ucs_text(*ucx, e.status), true);
        break;
      case Event::Kind::peer_fault:
        drop_peer(e.peer, e.reason, true);
        break;
    }
  }

  bool run_deferred() {
    bool any = false;
    while (!deferred.empty()) {
      delivering.swap(deferred);  // handlers may add events: those run in the next round
      any = true;
      size_t i = 0;
      try {
        for (; i < delivering.size(); ++i) run(delivering[i]);
      } catch (...) {
        // Keep what was not delivered, in order, ahead of anything added meanwhile.
        deferred.insert(deferred.begin(), std::make_move_iterator(delivering.begin() + static_cast<long>(i) + 1),
                        std::make_move_iterator(delivering.end()));
        delivering.clear();
        throw;
      }
      delivering.clear();
    }
    return any;
  }
};

void prepare_environment(const Ucx& ucx) {
  // Every endpoint asks for peer-failure detection (a dead peer must surface as an error, never a
  // hang). UCX 1.13 then leaves out shared memory unless MM_ERROR_HANDLING is on, and leaves out
  // CMA, so its TCP put lane would carry intra-host bulk data at loopback-TCP speed; without TCP
  // put, rendezvous runs over the shared-memory lane instead.
  default_ucx_setting(ucx, "MM_ERROR_HANDLING", "y", {"sm", "shm", "mm", "posix", "sysv"});
  default_ucx_setting(ucx, "TCP_PUT_ENABLE", "n", {"tcp"});
  // A server restarted on its port must listen again at once, not after its old connections'
  // TIME_WAIT (UCX 1.13's default is off). Linux still refuses a port another socket listens on.
  ucx.default_setting("TCP_CM_REUSEADDR", "y");
}

Worker::Worker(Events events, Options options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.owner_worker = this;
  const Ucx& ucx = ucx_for_new_context();
  m.ucx = &ucx;
  m.owner = getpid();
  m.events = std::move(events);
  m.options = options;
  prepare_environment(ucx);
  ucp_config_t* config = nullptr;
  check(ucx, ucx.ucp_config_read(nullptr, nullptr, &config), "UCX configuration");
  // Notice a dead peer within seconds.
  try {
    set_default(ucx, config, "KEEPALIVE_INTERVAL", (std::to_string(options.keepalive_seconds) + "s").c_str());
    // One shared-memory transport is enough (posix, which UCX prefers): SysV's costs every worker
    // 2-3 ms to make and its connections their set-up (a program's first OpenCL call through
    // Outboard took 11-16 ms with it on the H200 host, 8-13 without). Ours only: the program's
    // own UCX users keep what the environment says.
    set_default(ucx, config, "TLS", "^sysv");
    // Shared memory's receive buffers come in batches of 512 by default (4 MiB, each page touched
    // as the worker is made: 2-3 ms of a 5 ms worker on the 2-core VM, bench/probes/ucx_startup).
    // 128 are still twice the receive FIFO's 64 elements; more are made as they are needed. Only
    // where the transports are ours (above): with UCX_TLS naming no shared memory, UCX warns of
    // the setting on stdout (and `outboard status --json` printed that before its JSON).
    if (!std::getenv("UCX_TLS") && !std::getenv("UCX_POSIX_RX_BUFS_GROW"))
      set_default(ucx, config, "MM_RX_BUFS_GROW", "128");
  } catch (...) {
    ucx.ucp_config_release(config);
    throw;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  ucs_status_t s = ucx.init(&params, config, &m.context);
  ucx.ucp_config_release(config);
  check(ucx, s, "UCX initialisation");
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  s = ucx.ucp_worker_create(m.context, &wp, &m.worker);
  if (s != UCS_OK) {
    ucx.ucp_cleanup(m.context);
    check(ucx, s, "UCX worker creation");
  }
  if (ucx.ucp_worker_get_efd(m.worker, &m.ucx_fd) != UCS_OK) m.ucx_fd = -1;
  m.signal_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  // A handler for every id a peer can name, not only ours: a peer chooses the ids it sends to, and
  // UCX 1.13 does not cope with ids that have none. Registering an id grows its handler table
  // past that id (to the realloc'd capacity) but leaves the other new entries uninitialised
  // (ucp_worker_set_am_handler_common initialises entry `id` where it means `i`; fixed in 1.17),
  // so a message to such an id calls whatever the heap left there, and a rendezvous one first
  // logs "...does not support rendezvous protocol" from garbage flags; for an id beyond the table
  // it reads the entry's flags before checking the id (ucp_am_handler_common,
  // ucp_am_rndv_process_rts). The highest id first: the table is sized once, then every entry
  // is set. Costs 1.5 MiB per worker and nothing per message; open_sink replaces an id's handler.
  auto set_handler = [&](unsigned id, ucp_am_recv_callback_t cb, void* arg) {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = id;
    hp.cb = cb;
    hp.arg = arg;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    if (ucs_status_t st = ucx.ucp_worker_set_am_recv_handler(m.worker, &hp); st != UCS_OK) {
      ucx.ucp_worker_destroy(m.worker);
      ucx.ucp_cleanup(m.context);
      if (m.signal_fd >= 0) ::close(m.signal_fd);
      check(ucx, st, "UCX active-message handler");
    }
  };
  for (unsigned id = kAmIds; id-- > 0;) set_handler(id, Impl::on_stray_am, nullptr);
  set_handler(kAmId, Impl::on_am, impl_.get());
}

Worker::~Worker() {
  Impl& m = *impl_;
  if (!made_here(m.owner)) {
    // Inherited from the process this one was forked from: its endpoints' sockets are in an
    // epoll set shared with that process, its requests and locks are that process's (ucx.hpp).
    // Closing or destroying anything here would tear down the parent's session: leak it all.
    (void)impl_.release();
    return;
  }
  if (m.lanes) m.lanes->stop();  // their threads first: they post to this worker and signal it
  m.probe.reset();
  // The listener goes last, with no progress after it: UCX 1.13 hands a connection its socket took
  // before the listener was destroyed, and whose request arrives after, to the destroyed
  // listener's callback (ucp_cm_server_conn_request_cb on freed memory: the churn soak's second
  // server, stopped while clients were connecting, crashed so once in 59 stops). Requests that
  // arrive meanwhile are refused. UCX's own thread can still meet such a request in the moment
  // between the two destroys; the server process therefore tears nothing down when it stops
  // (tools/outboard/serve.cpp).
  auto refuse_incoming = [&m] {
    for (ucp_conn_request_h req : m.incoming)
      if (m.listener) m.ucx->ucp_listener_reject(m.listener, req);
    m.incoming.clear();
  };
  std::vector<PeerId> ids;
  for (auto& [id, _] : m.peers) ids.push_back(id);
  for (PeerId id : ids) m.drop_peer(id, "", false);
  m.drop_arrivals(0);
  // Let cancelled operations and closes finish, within reason: a peer that stopped progressing
  // never answers a close, so the wait is bounded in time, not in progress calls.
  const uint64_t give_up = now_ns() + kCloseGraceNs;
  while ((m.closes_in_flight() > 0 || m.sends.next != &m.sends || m.recvs.next != &m.recvs || !m.borrowed.empty()) &&
         now_ns() < give_up) {
    m.ucx->ucp_worker_progress(m.worker);
    m.reap_retiring();
    refuse_incoming();
  }
  refuse_incoming();
  // A send still queued on an endpoint whose wire-up never finished (its peer stopped answering)
  // is one UCX 1.13 cannot purge: ucp_worker_destroy aborts the process on it ("pending request
  // ... should have been flushed"). Then the worker is left to the process's end, never destroyed.
  const bool sends_stuck = m.sends.next != &m.sends || !m.borrowed.empty();
  try {
    m.run_deferred();
  } catch (...) {
  }
  // Sends UCX never completed; a completion event already queued has been run above. Their
  // requests are still UCX's, and ucp_worker_destroy may complete them: they are marked, kept off
  // the free list (a second free_send of one was a double free), and deleted once it returns.
  std::vector<Impl::SendOp*> abandoned_sends;
  std::vector<Impl::RecvOp*> abandoned_recvs;
  while (m.sends.next != &m.sends) {
    Impl::SendOp* op = m.sends.next;
    try {
      op->complete(false);
    } catch (...) {
    }
    op->prev->next = op->next;
    op->next->prev = op->prev;
    op->abandoned = true;
    abandoned_sends.push_back(op);
  }
  for (auto& [request, done] : m.borrowed) {
    if (!done) continue;
    try {
      done->fn(done->arg, false);
    } catch (...) {
    }
  }
  while (m.recvs.next != &m.recvs) {
    Impl::RecvOp* op = m.recvs.next;
    op->prev->next = op->next;
    op->next->prev = op->prev;
    op->abandoned = true;
    abandoned_recvs.push_back(op);
  }
  if (sends_stuck) {
    (void)impl_.release();  // the abandoned operations stay with it: UCX still holds them
    return;
  }
  if (m.listener) m.ucx->ucp_listener_destroy(m.listener);
  m.ucx->ucp_worker_destroy(m.worker);
  for (auto* op : abandoned_sends) delete op;
  for (auto* op : abandoned_recvs) delete op;
  m.ucx->ucp_cleanup(m.context);
  if (m.signal_fd >= 0) ::close(m.signal_fd);
}

uint16_t Worker::listen(const std::string& host, uint16_t port) {
  sockaddr_storage ss = resolve(host, port, true);
  ucp_listener_params_t p{};
  p.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&ss);
  p.sockaddr.addrlen = sockaddr_len(ss);
  p.conn_handler.cb = Impl::on_conn_request;
  p.conn_handler.arg = impl_.get();
  const Ucx& ucx = *impl_->ucx;
  ucs_status_t s = ucx.ucp_listener_create(impl_->worker, &p, &impl_->listener);
  if (s == UCS_ERR_BUSY)
    throw Error("cannot listen on " + host + ":" + std::to_string(port) + ": the port is in use (another server?)");
  if (s != UCS_OK) throw Error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ucs_text(ucx, s));
  ucp_listener_attr_t attr{};
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  check(ucx, ucx.ucp_listener_query(impl_->listener, &attr), "UCX listener query");
  const auto& sa = attr.sockaddr;
  return ntohs(sa.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(sa).sin6_port
                                        : reinterpret_cast<const sockaddr_in&>(sa).sin_port);
}

std::vector<uint16_t> Worker::listen_lanes(const std::string& host, unsigned count, uint16_t first_port) {
  return impl_->lane_threads().listen(host, count, first_port);
}

PeerId Worker::connect_lane(const std::string& host, uint16_t port) {
  return impl_->lane_threads().connect(host, port);
}

bool Worker::is_lane(PeerId peer) { return LaneThreads::owns(peer); }

void Worker::land(uint64_t ticket, Landing landing) { impl_->land(ticket, std::move(landing)); }

PeerId Worker::connect(const std::string& host, uint16_t port) {
  sockaddr_storage ss = resolve(host, port, false);
  PeerId id = impl_->next_peer++;
  auto peer = std::make_unique<Impl::Peer>(Impl::Peer{impl_.get(), id, nullptr});
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&ss);
  p.sockaddr.addrlen = sockaddr_len(ss);
  p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = Impl::on_ep_error;
  p.err_handler.arg = peer.get();
  const Ucx& ucx = *impl_->ucx;
  ucs_status_t s = ucx.ucp_ep_create(impl_->worker, &p, &peer->ep);
  if (s != UCS_OK) throw Error("cannot connect to " + host + ":" + std::to_string(port) + ": " + ucs_text(ucx, s));
  impl_->peer_of_ep[peer->ep] = peer.get();
  impl_->peers[id] = std::move(peer);
  return id;
}

void Worker::send(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload,
                  std::function<void(bool)> done) {
  send_op(peer, header, payload, std::move(done), {});
}

void Worker::send(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload, SendDone done) {
  send_op(peer, header, payload, nullptr, done);
}

void Worker::send_op(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload,
                     std::function<void(bool)> done, SendDone plain) {
  // UCX 1.13 aborts the process on a header its rendezvous cannot carry (its limit, about 8 KB,
  // depends on the transports: "RTS is too big"); the layers above send longer messages otherwise
  // (wire::Enveloped). A clear error instead of the abort.
  if (header.size() > kMaxHeaderBytes)
    throw Error("a message header of " + std::to_string(header.size()) + " bytes: the transport carries at most " +
                std::to_string(kMaxHeaderBytes));
  Impl& m = *impl_;
  if (LaneThreads::owns(peer) && m.lanes) return m.lanes->send(peer, header, payload, std::move(done), plain);
  m.idle_rounds = 0;  // a send may wait for room at first: spun for, not slept on
  Impl::SendOp* op = m.new_send();
  op->peer = peer;
  op->done = std::move(done);
  op->plain = plain;
  auto it = m.peers.find(peer);
  if (it == m.peers.end()) {
    m.finish_send(op, false);
    return;
  }
  Impl::Peer& to = *it->second;
  if (to.seal) {  // sealed: the header into the op, the payload into memory of the op's
    uint64_t total = 0;
    for (const Segment& s : payload) total += s.bytes;
    try {
      const uint64_t counter = to.seal->seal_header(header, total, op->header_long);
      if (total) {
        op->sealed = Buffer::allocate(sealed_payload_bytes(total));
        to.seal->seal_payload(counter, payload, total, op->sealed.data());
      }
    } catch (const std::exception&) {  // no memory, or a payload too large to seal
      m.finish_send(op, false);
      return;
    }
    op->header_len = op->header_long.size();
    if (op->header_len <= Impl::SendOp::kInlineHeader) std::memcpy(op->header_inline, op->header_long.data(), op->header_len);
  } else {
    op->header_len = header.size();
    if (header.size() <= Impl::SendOp::kInlineHeader) {
      if (!header.empty()) std::memcpy(op->header_inline, header.data(), header.size());
    } else {
      op->header_long.assign(header.begin(), header.end());
    }
  }
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS |
                   UCP_OP_ATTR_FIELD_DATATYPE;
  p.flags = UCP_AM_SEND_FLAG_REPLY;
  p.cb.send = Impl::on_send_done;
  p.user_data = op;
  p.datatype = ucp_dt_make_contig(1);
  const void* buffer = nullptr;
  size_t count = 0, segments = 0;
  if (op->sealed.data()) {
    buffer = op->sealed.data(), count = op->sealed.size();
  } else {
    for (const Segment& s : payload)
      if (s.bytes) ++segments, buffer = s.data, count = s.bytes;
  }
  if (segments > 1) {
    ucp_dt_iov_t* iov = op->iov_inline;
    if (segments > Impl::SendOp::kInlineIov) {
      op->iov_long.resize(segments);
      iov = op->iov_long.data();
    }
    size_t n = 0;
    for (const Segment& s : payload)
      if (s.bytes) iov[n++] = {const_cast<void*>(s.data), s.bytes};
    p.datatype = ucp_dt_make_iov();
    buffer = iov;
    count = n;
  }
  ucs_status_ptr_t r = m.ucx->ucp_am_send_nbx(it->second->ep, kAmId, op->header(), op->header_len, buffer, count, &p);
  if (r == nullptr && !op->done) {  // completed at once: a plain completion runs right here
    m.free_send(op);
    if (plain.fn) plain.fn(plain.arg, true);
  } else if (r == nullptr)
    m.finish_send(op, true);
  else if (UCS_PTR_IS_ERR(r))
    m.finish_send(op, false);
}

void Worker::send_borrowed(PeerId peer, std::span<const std::byte> header, const void* data, size_t bytes,
                           const SendDone* done) {
  if (LaneThreads::owns(peer) && impl_->lanes) {  // copied and kept after all: the lane's thread sends it
    const Segment seg{data, bytes};
    return send_op(peer, header, {&seg, bytes ? size_t(1) : size_t(0)}, nullptr, *done);
  }
  impl_->send_borrowed(peer, kAmId, header, data, bytes, done);
}

uint32_t Worker::open_sink(PeerId peer) { return impl_->open_sink(peer); }

void Worker::send_to_sink(PeerId peer, uint32_t sink, const void* data, size_t bytes, const SendDone* done) {
  if (sink < kFirstSinkId || sink >= kFirstSinkId + kMaxSinks) throw Error("invalid sink id " + std::to_string(sink));
  impl_->send_borrowed(peer, sink, {}, data, bytes, done);
}

void Worker::close(PeerId peer, bool force) {
  if (LaneThreads::owns(peer) && impl_->lanes) return impl_->lanes->close(peer, force);
  impl_->drop_peer(peer, "", false, force);
}

bool Worker::connected(PeerId peer) const {
  if (LaneThreads::owns(peer)) return impl_->lanes && impl_->lanes->connected(peer);
  return impl_->peers.count(peer) != 0;
}

bool Worker::reached(PeerId peer) const {
  if (LaneThreads::owns(peer)) return connected(peer);
  auto it = impl_->peers.find(peer);
  if (it == impl_->peers.end()) return false;
  // UCX answers from its connection manager's socket (the peer's address once it is connected,
  // an error before).
  ucp_ep_attr_t attr{};
  attr.field_mask = UCP_EP_ATTR_FIELD_REMOTE_SOCKADDR;
  return impl_->ucx->ucp_ep_query(it->second->ep, &attr) == UCS_OK;
}

Worker::Tables Worker::tables() const {
  Tables t{impl_->peers.size() + (impl_->lanes ? impl_->lanes->peers() : 0), impl_->retiring.size(),
           impl_->closes_in_flight()};
  if (impl_->lanes) {
    const LaneThreads::Waiting w = impl_->lanes->waiting();
    t.lane_events_waiting = w.events;
    t.lane_commands_waiting = w.commands;
    t.lane_landings_waiting = w.landings;
  }
  return t;
}

void Worker::protect(PeerId peer, const SealKeys& keys) {
  if (LaneThreads::owns(peer)) throw Error("a lane's connection is not sealed");
  auto it = impl_->peers.find(peer);
  if (it == impl_->peers.end()) throw Error("no such peer");
  impl_->close_sink(peer);
  it->second->seal = std::make_unique<Seal>(keys);
}

bool Worker::is_protected(PeerId peer) const {
  auto it = impl_->peers.find(peer);
  return it != impl_->peers.end() && it->second->seal;
}

bool Worker::progress() {
  Impl& m = *impl_;
  bool ucx_progressed = false;
  // Bounded: the caller comes back at once while there is work, and a UCX that always reports
  // progress cannot keep this call from returning; one round while nothing happens (wait() sleeps
  // between them).
  const int rounds = m.idle_rounds < Impl::kIdleRoundsBeforeSleep || !m.peers.empty() ? 256 : 1;
  for (int round = 0; round < rounds && m.ucx->ucp_worker_progress(m.worker); ++round) ucx_progressed = true;
  if (m.probe) m.probe->count_round();
  bool ours = false;
  if (!m.incoming.empty()) {
    m.accept_incoming();
    ours = true;
  }
  if (!m.retiring.empty()) m.reap_retiring();
  ours = m.run_deferred() || ours;
  if (m.lanes) ours = m.lanes->deliver(m.events) || ours;
  // With a connection, UCX's own progress may be work for it (ucp_get/ucp_put, which UCX 1.13
  // emulates with messages this side must serve): it counts.
  if (ours || (ucx_progressed && (!m.peers.empty() || m.closes_in_flight() > 0))) {
    m.idle_rounds = 0;
    return true;
  }
  if (m.idle_rounds < Impl::kIdleRoundsBeforeSleep + Impl::kLongSleepAfter) ++m.idle_rounds;
  if (!ucx_progressed) return false;
  // With no connection at all it counts for a while (endpoints closing, wiring up), not forever:
  // an idle server's progress thread spun on a core for good that way, UCX reporting progress
  // round after round with only the listener open (issue 33).
  if (m.idle_rounds < Impl::kIdleRoundsBeforeSleep) return true;
  if (!m.warned_empty_progress && m.options.log_busy_without_work) {
    m.warned_empty_progress = true;
    spdlog::warn("transport.ucx_busy_without_work (UCX reports progress with no connection open: the worker "
                 "sleeps between rounds while that lasts)");
  }
  return false;
}

bool Worker::receiving(double interval_seconds, double patience_seconds, bool keep_probing) {
  Impl& m = *impl_;
  if (m.probe_unavailable || (!m.probe && !keep_probing)) return true;
  try {
    if (!m.probe) m.probe = std::make_unique<ReceiveProbe>(*m.ucx, m.context, m.worker);
    const uint64_t waited = m.probe->step(now_ns(), static_cast<uint64_t>(interval_seconds * 1e9), keep_probing);
    return waited < static_cast<uint64_t>(patience_seconds * 1e9);
  } catch (const Error& e) {
    m.probe_unavailable = true;
    m.probe.reset();
    spdlog::warn("transport.receive_probe_unavailable error=\"{}\" (a stalled shared-memory queue is not detected)",
                 e.what());
    return true;
  }
}

Worker::ProbeCounts Worker::probe_counts() const {
  const auto& probe = impl_->probe;
  return probe ? ProbeCounts{probe->sent(), probe->arrived()} : ProbeCounts{};
}

bool Worker::arm() {
  Impl& m = *impl_;
  if (!m.deferred.empty() || !m.incoming.empty() || (m.lanes && m.lanes->pending())) return false;
  if (m.ucx_fd < 0) return true;
  return m.ucx->ucp_worker_arm(m.worker) != UCS_ERR_BUSY;
}

void Worker::wait(int timeout_ms) {
  if (arm()) return block(timeout_ms);
  // UCX has events pending: normally the next progress() takes them. Where it keeps saying so
  // while nothing happens, sleep a little (the signal still wakes us) rather than spin. UCX 1.13
  // says so for good once a client dies with its shared-memory queue full of our messages: the
  // endpoint's discard flushes it, the flush waits for room the dead reader never makes, and a
  // pending send keeps ucp_worker_arm busy while ucp_worker_progress reports nothing (issue 33).
  Impl& m = *impl_;
  // With a connection open it does not sleep: every request would wait out the sleep. (A new
  // client once could not authenticate at all after some 450 clients killed mid-call, which was
  // put down to these sleeps; the cause was a stalled receive queue, receive_probe.hpp.) Idle,
  // with no connection, it sleeps.
  if (m.idle_rounds < Impl::kIdleRoundsBeforeSleep || !m.peers.empty()) return;
  if (!m.warned_busy_arm && m.options.log_busy_without_work) {
    m.warned_busy_arm = true;
    spdlog::warn("transport.ucx_busy_without_work (UCX will not arm its wakeup though nothing happens, as after a "
                 "client died with messages queued to it over shared memory: the worker sleeps {}-{} ms between "
                 "rounds while that lasts)",
                 Impl::kBusySleepMs, Impl::kLongBusySleepMs);
  }
  // Not on UCX's fd: what UCX could not take in its arm stays ready there, so poll would return at once.
  pollfd fd = {m.signal_fd, POLLIN, 0};
  if (::poll(&fd, 1, std::min(timeout_ms, m.busy_sleep_ms())) > 0) {
    uint64_t v;
    [[maybe_unused]] auto n = ::read(m.signal_fd, &v, sizeof v);
  }
}

void Worker::block(int timeout_ms) {
  Impl& m = *impl_;
  if (m.ucx_fd < 0) {  // transports without wakeup support: sleep briefly instead
    usleep(static_cast<useconds_t>(std::min(timeout_ms, 1) * 1000));
    return;
  }
  pollfd fds[2] = {{m.ucx_fd, POLLIN, 0}, {m.signal_fd, POLLIN, 0}};
  if (::poll(fds, 2, timeout_ms) > 0 && (fds[1].revents & POLLIN)) {
    uint64_t v;
    [[maybe_unused]] auto n = ::read(m.signal_fd, &v, sizeof v);
  }
}

void Worker::signal() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(impl_->signal_fd, &one, sizeof one);
}

std::vector<std::byte> Worker::address() const {
  ucp_address_t* addr = nullptr;
  size_t len = 0;
  const Ucx& ucx = *impl_->ucx;
  check(ucx, ucx.ucp_worker_get_address(impl_->worker, &addr, &len), "UCX worker address");
  const auto* p = reinterpret_cast<const std::byte*>(addr);
  std::vector<std::byte> out(p, p + len);
  ucx.ucp_worker_release_address(impl_->worker, addr);
  return out;
}

Registration Worker::register_memory(void* data, size_t bytes) {
  ucp_mem_map_params_t p{};
  p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  p.address = data;
  p.length = bytes;
  ucp_mem_h memh = nullptr;
  const Ucx& ucx = *impl_->ucx;
  check(ucx, ucx.ucp_mem_map(impl_->context, &p, &memh), "UCX memory registration");
  Registration r;
  r.ucx_ = &ucx;
  r.owner_ = impl_->owner;
  r.context_ = impl_->context;
  r.handle_ = memh;
  void* packed = nullptr;
  size_t len = 0;
  ucs_status_t s = ucx.ucp_rkey_pack(impl_->context, memh, &packed, &len);
  if (s != UCS_OK) check(ucx, s, "UCX remote key");  // r's destructor unmaps
  const auto* k = static_cast<const std::byte*>(packed);
  r.key_.assign(k, k + len);
  ucx.ucp_rkey_buffer_release(packed);
  return r;
}

Registration::Registration(Registration&& o) noexcept
    : ucx_(o.ucx_), owner_(o.owner_), context_(o.context_), handle_(o.handle_), key_(std::move(o.key_)) {
  o.handle_ = nullptr;
}

Registration& Registration::operator=(Registration&& o) noexcept {
  if (this != &o) {
    release();
    ucx_ = o.ucx_, owner_ = o.owner_, context_ = o.context_, handle_ = o.handle_, key_ = std::move(o.key_);
    o.handle_ = nullptr;
  }
  return *this;
}

Registration::~Registration() { release(); }

void Registration::release() {
  // One inherited from the process this one was forked from stays mapped: it is that process's.
  if (handle_ && made_here(owner_))
    ucx_->ucp_mem_unmap(static_cast<ucp_context_h>(context_), static_cast<ucp_mem_h>(handle_));
  handle_ = nullptr;
  key_.clear();
}

std::string Worker::describe(PeerId peer) const {
  if (LaneThreads::owns(peer)) return connected(peer) ? "a lane: a UCX worker and a thread of its own" : "not connected";
  auto it = impl_->peers.find(peer);
  if (it == impl_->peers.end()) return "not connected";
  char* text = nullptr;
  size_t len = 0;
  // The instance's own stdio: a fresh instance (ucx.hpp) cannot write to this C library's streams.
  const Ucx& ucx = *impl_->ucx;
  FILE* f = ucx.open_memstream(&text, &len);
  if (!f) return "?";
  ucx.ucp_ep_print_info(it->second->ep, f);
  ucx.fclose(f);
  // Keep the lane lines: they name the transport and device each kind of traffic uses.
  std::string out, all(text, len);
  ucx.free(text);
  size_t pos = 0;
  while (pos < all.size()) {
    size_t eol = all.find('\n', pos);
    if (eol == std::string::npos) eol = all.size();
    std::string line = all.substr(pos, eol - pos);
    if (line.find("lane[") != std::string::npos) out += line + "\n";
    pos = eol + 1;
  }
  return out.empty() ? all : out;
}

}  // namespace outboard::transport
