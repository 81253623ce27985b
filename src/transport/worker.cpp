// UCX (ucp) implementation of transport::Worker.
//
// UCX callbacks (active message arrival, send/receive completion, endpoint errors, incoming
// connections) only record what happened; the events are delivered to the upper layer from
// progress(), after ucp_worker_progress() has returned, so upper-layer handlers may freely send or
// close without re-entering UCX.
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "common/error.hpp"
#include "transport/transport.hpp"

namespace outboard::transport {
namespace {

constexpr unsigned kAmId = 0;  // one active-message id: the header says what the message is

std::string ucs_text(ucs_status_t s) { return ucs_status_string(s); }

void check(ucs_status_t s, const char* what) {
  if (s != UCS_OK) throw Error(std::string(what) + ": " + ucs_text(s));
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

// Whether UCX_TLS lets UCX use any of these transports.
bool tls_allows(std::initializer_list<const char*> names) {
  const char* tls = std::getenv("UCX_TLS");
  if (!tls || !*tls) return true;
  std::string list = tls;
  const bool exclude = list.front() == '^';
  if (exclude) list.erase(0, 1);
  bool listed = false;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = std::min(list.find(',', pos), list.size());
    std::string item = list.substr(pos, comma - pos);
    for (const char* n : names) listed = listed || item == n;
    if (!exclude && item == "all") return true;
    pos = comma + 1;
  }
  return exclude ? !listed : listed;
}

// A UCX option, given through the environment (set through ucp_config_modify, UCX warns on
// stdout when a transport it configures is not in use) and only where that transport may be used.
// The user's own UCX_<name> wins.
void default_ucx_setting(const char* name, const char* value, std::initializer_list<const char*> transports) {
  if (tls_allows(transports)) setenv((std::string("UCX_") + name).c_str(), value, 0);
}

// Sets a UCX option unless the user's environment already does (UCX_<name>).
void set_default(ucp_config_t* config, const char* name, const char* value) {
  if (std::getenv((std::string("UCX_") + name).c_str())) return;
  ucs_status_t s = ucp_config_modify(config, name, value);
  if (s != UCS_OK) throw Error(std::string("UCX option ") + name + ": " + ucs_text(s));
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
  };
  struct SendOp {
    Impl* impl;
    PeerId peer;
    std::vector<std::byte> header;
    std::vector<ucp_dt_iov_t> iov;
    std::function<void(bool)> done;
  };
  struct RecvOp {
    Impl* impl;
    PeerId peer;
    std::vector<std::byte> header;
    Buffer buffer;
  };

  Events events;
  Options options;
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  ucp_listener_h listener = nullptr;
  int ucx_fd = -1;     // UCX's wakeup fd, -1 if the transports offer none
  int signal_fd = -1;  // our own eventfd for signal(): always thread-safe
  PeerId next_peer = 1;
  std::unordered_map<PeerId, std::unique_ptr<Peer>> peers;
  std::unordered_map<ucp_ep_h, PeerId> peer_of_ep;
  std::vector<ucp_conn_request_h> incoming;
  std::deque<std::function<void()>> deferred;
  std::unordered_set<SendOp*> sends;
  std::unordered_set<RecvOp*> recvs;
  std::vector<void*> closing;  // ep-close requests still in flight

  // ---- UCX callbacks: record only ----
  static void on_conn_request(ucp_conn_request_h req, void* arg) { static_cast<Impl*>(arg)->incoming.push_back(req); }

  static void on_ep_error(void* arg, ucp_ep_h, ucs_status_t status) {
    auto* peer = static_cast<Peer*>(arg);
    Impl* self = peer->impl;
    PeerId id = peer->id;
    self->deferred.push_back([self, id, status] { self->drop_peer(id, "connection lost: " + ucs_text(status), true); });
  }

  static void on_send_done(void* request, ucs_status_t status, void* user) {
    auto* op = static_cast<SendOp*>(user);
    ucp_request_free(request);
    op->impl->finish_send(op, status == UCS_OK);
  }

  static void on_recv_done(void* request, ucs_status_t status, size_t, void* user) {
    auto* op = static_cast<RecvOp*>(user);
    ucp_request_free(request);
    op->impl->finish_recv(op, status == UCS_OK);
  }

  static ucs_status_t on_am(void* arg, const void* header, size_t header_len, void* data, size_t len,
                            const ucp_am_recv_param_t* param) {
    auto* self = static_cast<Impl*>(arg);
    const bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    PeerId peer = 0;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) {
      auto it = self->peer_of_ep.find(param->reply_ep);
      if (it != self->peer_of_ep.end()) peer = it->second;
    }
    // Returning UCS_OK without receiving drops the data (a rendezvous descriptor too).
    if (peer == 0) return UCS_OK;  // from an endpoint we no longer know (closed)
    auto* h = static_cast<const std::byte*>(header);
    std::vector<std::byte> hdr(h, h + header_len);
    if (len == 0) {
      self->deliver(peer, std::move(hdr), Buffer{}, false);
      return UCS_OK;
    }
    std::optional<Buffer> dst;
    if (self->events.on_payload) {
      try {
        dst = self->events.on_payload(peer, hdr, len);
      } catch (...) {
        dst.reset();
      }
    }
    if (!dst || dst->size() < len) {
      self->deliver(peer, std::move(hdr), Buffer{}, true);
      return UCS_OK;
    }
    if (!rndv) {  // eager: the data is only valid during this callback
      std::memcpy(dst->data(), data, len);
      self->deliver(peer, std::move(hdr), std::move(*dst), false);
      return UCS_OK;
    }
    auto* op = new RecvOp{self, peer, std::move(hdr), std::move(*dst)};
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = on_recv_done;
    p.user_data = op;
    self->recvs.insert(op);
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(self->worker, data, op->buffer.data(), len, &p);
    if (r == nullptr)
      self->finish_recv(op, true);
    else if (UCS_PTR_IS_ERR(r))
      self->finish_recv(op, false);
    return UCS_OK;
  }

  // ---- event delivery (runs from progress()) ----
  void deliver(PeerId peer, std::vector<std::byte> hdr, Buffer payload, bool refused) {
    auto box = std::make_shared<std::tuple<std::vector<std::byte>, Buffer>>(std::move(hdr), std::move(payload));
    deferred.push_back([this, peer, box, refused] {
      if (events.on_message && peers.count(peer))
        events.on_message(peer, std::move(std::get<0>(*box)), std::move(std::get<1>(*box)), refused);
    });
  }

  void finish_send(SendOp* op, bool ok) {
    sends.erase(op);
    deferred.push_back([op, ok] {
      std::unique_ptr<SendOp> owned(op);
      if (owned->done) owned->done(ok);
    });
  }

  void finish_recv(RecvOp* op, bool ok) {
    recvs.erase(op);
    std::unique_ptr<RecvOp> owned(op);
    if (ok) deliver(op->peer, std::move(op->header), std::move(op->buffer), false);
    // A failed receive means the peer failed: its endpoint error reports that.
  }

  void accept_incoming() {
    auto reqs = std::move(incoming);
    incoming.clear();
    for (ucp_conn_request_h req : reqs) {
      ucp_conn_request_attr_t attr{};
      attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
      std::string addr = ucp_conn_request_query(req, &attr) == UCS_OK ? sockaddr_text(attr.client_address) : "?";
      PeerId id = next_peer++;
      auto peer = std::make_unique<Peer>(Peer{this, id, nullptr});
      ucp_ep_params_t p{};
      p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
      p.conn_request = req;
      p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      p.err_handler.cb = on_ep_error;
      p.err_handler.arg = peer.get();
      if (ucp_ep_create(worker, &p, &peer->ep) != UCS_OK) continue;  // UCX rejects the request itself
      peer_of_ep[peer->ep] = id;
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
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &p);
    if (r && !UCS_PTR_IS_ERR(r)) closing.push_back(r);
    // The Peer object is the error handler's argument: keep it until the close has finished.
    retired.push_back(std::move(it->second));
    peers.erase(it);
    if (report && events.on_disconnect) events.on_disconnect(id, reason);
  }
  std::vector<std::unique_ptr<Peer>> retired;

  void reap_closing() {
    for (size_t i = 0; i < closing.size();) {
      if (ucp_request_check_status(closing[i]) != UCS_INPROGRESS) {
        ucp_request_free(closing[i]);
        closing[i] = closing.back();
        closing.pop_back();
      } else {
        ++i;
      }
    }
    if (closing.empty()) retired.clear();
  }

  bool run_deferred() {
    bool any = false;
    while (!deferred.empty()) {
      auto f = std::move(deferred.front());
      deferred.pop_front();
      f();
      any = true;
    }
    return any;
  }
};

Worker::Worker(Events events, Options options) : impl_(std::make_unique<Impl>()) {
  impl_->events = std::move(events);
  impl_->options = options;
  // Every endpoint asks for peer-failure detection (a dead peer must surface as an error, never a
  // hang). UCX 1.13 then leaves out shared memory unless MM_ERROR_HANDLING is on, and leaves out
  // CMA, so its TCP put lane would carry intra-host bulk data at loopback-TCP speed; without TCP
  // put, rendezvous runs over the shared-memory lane instead.
  default_ucx_setting("MM_ERROR_HANDLING", "y", {"sm", "shm", "mm", "posix", "sysv"});
  default_ucx_setting("TCP_PUT_ENABLE", "n", {"tcp"});
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "UCX configuration");
  // Notice a dead peer within seconds.
  set_default(config, "KEEPALIVE_INTERVAL", (std::to_string(options.keepalive_seconds) + "s").c_str());
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  ucs_status_t s = ucp_init(&params, config, &impl_->context);
  ucp_config_release(config);
  check(s, "UCX initialisation");
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  s = ucp_worker_create(impl_->context, &wp, &impl_->worker);
  if (s != UCS_OK) {
    ucp_cleanup(impl_->context);
    check(s, "UCX worker creation");
  }
  if (ucp_worker_get_efd(impl_->worker, &impl_->ucx_fd) != UCS_OK) impl_->ucx_fd = -1;
  impl_->signal_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ucp_am_handler_param_t hp{};
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                  UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  hp.id = kAmId;
  hp.cb = Impl::on_am;
  hp.arg = impl_.get();
  hp.flags = UCP_AM_FLAG_WHOLE_MSG;
  check(ucp_worker_set_am_recv_handler(impl_->worker, &hp), "UCX active-message handler");
}

Worker::~Worker() {
  Impl& m = *impl_;
  if (m.listener) ucp_listener_destroy(m.listener);
  std::vector<PeerId> ids;
  for (auto& [id, _] : m.peers) ids.push_back(id);
  for (PeerId id : ids) m.drop_peer(id, "", false);
  // Let cancelled operations and closes finish, within reason.
  for (int i = 0; i < 100000 && (!m.closing.empty() || !m.sends.empty() || !m.recvs.empty()); ++i) {
    ucp_worker_progress(m.worker);
    m.reap_closing();
  }
  m.run_deferred();
  for (Impl::SendOp* op : std::vector<Impl::SendOp*>(m.sends.begin(), m.sends.end())) {
    if (op->done) op->done(false);
    delete op;
  }
  for (Impl::RecvOp* op : m.recvs) delete op;
  ucp_worker_destroy(m.worker);
  ucp_cleanup(m.context);
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
  ucs_status_t s = ucp_listener_create(impl_->worker, &p, &impl_->listener);
  if (s != UCS_OK) throw Error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ucs_text(s));
  ucp_listener_attr_t attr{};
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  check(ucp_listener_query(impl_->listener, &attr), "UCX listener query");
  const auto& sa = attr.sockaddr;
  return ntohs(sa.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(sa).sin6_port
                                        : reinterpret_cast<const sockaddr_in&>(sa).sin_port);
}

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
  ucs_status_t s = ucp_ep_create(impl_->worker, &p, &peer->ep);
  if (s != UCS_OK) throw Error("cannot connect to " + host + ":" + std::to_string(port) + ": " + ucs_text(s));
  impl_->peer_of_ep[peer->ep] = id;
  impl_->peers[id] = std::move(peer);
  return id;
}

void Worker::send(PeerId peer, std::span<const std::byte> header, std::vector<Segment> payload,
                  std::function<void(bool)> done) {
  auto it = impl_->peers.find(peer);
  auto* op = new Impl::SendOp{impl_.get(), peer, std::vector<std::byte>(header.begin(), header.end()), {}, std::move(done)};
  if (it == impl_->peers.end()) {
    impl_->finish_send(op, false);
    return;
  }
  for (const Segment& s : payload)
    if (s.bytes) op->iov.push_back({const_cast<void*>(s.data), s.bytes});
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS |
                   UCP_OP_ATTR_FIELD_DATATYPE;
  p.flags = UCP_AM_SEND_FLAG_REPLY;
  p.cb.send = Impl::on_send_done;
  p.user_data = op;
  const void* buffer = nullptr;
  size_t count = 0;
  if (op->iov.size() == 1) {
    p.datatype = ucp_dt_make_contig(1);
    buffer = op->iov[0].buffer;
    count = op->iov[0].length;
  } else if (op->iov.size() > 1) {
    p.datatype = ucp_dt_make_iov();
    buffer = op->iov.data();
    count = op->iov.size();
  } else {
    p.datatype = ucp_dt_make_contig(1);
  }
  impl_->sends.insert(op);
  ucs_status_ptr_t r = ucp_am_send_nbx(it->second->ep, kAmId, op->header.data(), op->header.size(), buffer, count, &p);
  if (r == nullptr)
    impl_->finish_send(op, true);
  else if (UCS_PTR_IS_ERR(r))
    impl_->finish_send(op, false);
}

void Worker::close(PeerId peer, bool force) { impl_->drop_peer(peer, "", false, force); }

bool Worker::connected(PeerId peer) const { return impl_->peers.count(peer) != 0; }

bool Worker::progress() {
  Impl& m = *impl_;
  bool any = false;
  while (ucp_worker_progress(m.worker)) any = true;
  if (!m.incoming.empty()) {
    m.accept_incoming();
    any = true;
  }
  if (!m.closing.empty()) m.reap_closing();
  return m.run_deferred() || any;
}

bool Worker::arm() {
  Impl& m = *impl_;
  if (!m.deferred.empty() || !m.incoming.empty()) return false;
  if (m.ucx_fd < 0) return true;
  return ucp_worker_arm(m.worker) != UCS_ERR_BUSY;
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

std::string Worker::describe(PeerId peer) const {
  auto it = impl_->peers.find(peer);
  if (it == impl_->peers.end()) return "not connected";
  char* text = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  if (!f) return "?";
  ucp_ep_print_info(it->second->ep, f);
  std::fclose(f);
  // Keep the lane lines: they name the transport and device each kind of traffic uses.
  std::string out, all(text, len);
  std::free(text);
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
