#include "server/metrics.hpp"

#include <microhttpd.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "server/chunked.hpp"

namespace outboard::server {

// The identity a session proved (an unproven claim labels nothing: a stranger's input).
std::string metrics_identity(const Session& s) { return s.authenticated ? s.identity : "unauthenticated"; }

namespace {

// Upper bounds of the duration buckets, in seconds: a small call answers in tens of microseconds
// on one host, a large GPU LAPACK call takes minutes. Printed as written here.
constexpr std::array<double, 21> kBounds = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                            0.0025,  0.005,    0.01,    0.025,  0.05,    0.1,    0.25,
                                            0.5,     1,        2.5,     5,      10,     30,     60};
constexpr std::array<const char*, kBounds.size()> kBoundText = {
    "0.00001", "0.000025", "0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
    "0.05",    "0.1",      "0.25",    "0.5",    "1",       "2.5",    "5",     "10",     "30",    "60"};
// Identities whose series are kept (a bound all the same: identities can come and go with SIGHUP); past this,
// the longest idle identity without an open session is dropped (its series vanish from scrapes).
constexpr size_t kMaxIdentities = 1000;
constexpr size_t kMaxLabelBytes = 200;

struct Series {
  uint64_t calls = 0, errors = 0, bytes_in = 0, bytes_out = 0;
  std::array<uint64_t, kBounds.size() + 1> counts{};  // per bucket (not cumulative); last: above every bound
  uint64_t timed = 0;
  double seconds = 0;

  void observe(uint64_t ns) {
    const double s = ns / 1e9;
    size_t i = 0;
    while (i < kBounds.size() && s > kBounds[i]) ++i;
    ++counts[i];
    ++timed;
    seconds += s;
  }
};

struct Identity {
  std::map<std::string, Series, std::less<>> services;  // by service name; nodes stay put
  uint64_t last_ns = 0;  // last activity
  unsigned peers = 0;    // open sessions recorded here
};

struct Pending {
  Series* series;
  uint64_t start_ns;
};

struct Peer {
  Identity* identity = nullptr;
  std::string name;                                        // the identity's label value
  std::vector<std::pair<std::string_view, Series*>> used;  // services this session used (few)
  std::unordered_map<uint64_t, Pending> pending;           // calls in progress, by id
};

// What a scrape renders: copied from the live state by the progress thread, then never changed.
struct Snapshot {
  struct Row {
    std::string service, identity;
    Series s;
  };
  std::vector<Row> rows;
  std::map<std::string, uint64_t> sessions;                                   // identity -> open
  std::map<std::pair<std::string, std::string>, uint64_t> service_sessions;  // (service, identity) -> open
  uint64_t connections = 0, refused_auth = 0;
  std::vector<DeviceHealth> devices;
  ConnectionTables tables;
};

// The bytes of payload a request carries: a chunk's own length, else the message's announced
// payload (direct calls move theirs over the copy lanes: counted when they end).
uint64_t payload_of(const wire::Message& m) {
  return std::visit(
      [](const auto& x) -> uint64_t {
        if constexpr (requires { x.chunk_index; }) return wire::chunk_length(x);
        else if constexpr (requires { x.payload_bytes; }) return x.payload_bytes;
        else return 0;
      },
      m);
}

uint64_t call_id_of(const wire::Message& m) {
  return std::visit(
      [](const auto& x) -> uint64_t {
        if constexpr (requires { x.call_id; }) return x.call_id;
        else return 0;
      },
      m);
}

// A label value as the text format wants it: escaped, printable ASCII (a client name is the
// peer's to choose), bounded.
std::string label(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, kMaxLabelBytes)) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

std::string number(double v) {  // the shortest text that reads back as v
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

struct Metrics::Impl {
  bool enabled = false;
  MHD_Daemon* daemon = nullptr;
  const double start_time =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  // The progress thread's.
  std::map<std::string, Identity, std::less<>> identities;
  std::unordered_map<PeerId, Peer> peers;
  bool dirty = true;
  std::map<std::string, uint64_t> last_sessions;
  uint64_t last_connections = 0, last_refused = 0;
  std::vector<DeviceHealth> last_devices;
  ConnectionTables last_tables;
  uint64_t restarts = 0;  // set before serving, read by scrapes

  // Shared with the HTTP thread.
  mutable std::mutex mu;
  std::shared_ptr<const Snapshot> published = std::make_shared<Snapshot>();

  Peer& peer_of(const Session& s) {
    auto it = peers.find(s.peer);
    if (it != peers.end()) return it->second;
    Peer& p = peers[s.peer];
    p.name = metrics_identity(s);
    auto id = identities.find(p.name);
    if (id == identities.end()) {
      if (identities.size() >= kMaxIdentities) drop_idle_identity();
      id = identities.emplace(p.name, Identity{}).first;
    }
    p.identity = &id->second;
    ++p.identity->peers;
    return p;
  }

  void drop_idle_identity() {
    auto oldest = identities.end();
    for (auto it = identities.begin(); it != identities.end(); ++it)
      if (it->second.peers == 0 && (oldest == identities.end() || it->second.last_ns < oldest->second.last_ns))
        oldest = it;
    if (oldest != identities.end()) identities.erase(oldest);
  }

  Series& series(Peer& p, std::string_view service) {
    for (auto& [name, s] : p.used)
      if (name == service) return *s;
    auto it = p.identity->services.find(service);
    if (it == p.identity->services.end()) it = p.identity->services.emplace(std::string(service), Series{}).first;
    p.used.emplace_back(it->first, &it->second);
    return it->second;
  }

  // The call `id` of the peer ended: counted and timed, and forgotten.
  Series* finish(Peer& p, uint64_t id, bool ok, uint64_t now) {
    auto it = p.pending.find(id);
    if (it == p.pending.end()) return nullptr;
    Series* s = it->second.series;
    ++s->calls;
    if (!ok) ++s->errors;
    s->observe(now - it->second.start_ns);
    p.pending.erase(it);
    return s;
  }

  // Serves one request (libmicrohttpd's thread): GET or HEAD of /metrics.
  static MHD_Result answer(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                           const char*, size_t* upload_bytes, void**) {
    const auto* self = static_cast<const Metrics*>(cls);
    unsigned status = MHD_HTTP_OK;
    std::string body;
    const char* type = "text/plain; version=0.0.4; charset=utf-8";
    if (std::strcmp(method, "GET") != 0 && std::strcmp(method, "HEAD") != 0) {
      status = MHD_HTTP_METHOD_NOT_ALLOWED;
      body = "only GET /metrics\n";
      type = "text/plain";
    } else if (std::strcmp(url, "/metrics") != 0) {
      status = MHD_HTTP_NOT_FOUND;
      body = "see /metrics\n";
      type = "text/plain";
    } else {
      try {  // no exception may cross back into libmicrohttpd (C)
        body = self->render();
      } catch (const std::exception& e) {
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        body = std::string(e.what()) + "\n";
        type = "text/plain";
      }
    }
    if (*upload_bytes) *upload_bytes = 0;  // a body sent with the request is ignored
    MHD_Response* r = MHD_create_response_from_buffer(body.size(), body.data(), MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
  }
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}

Metrics::~Metrics() {
  if (impl_->daemon) MHD_stop_daemon(impl_->daemon);
}

namespace {

// The listening socket, made here so that a port in use or a bad host gets a precise error.
int listen_socket(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string where = host + ":" + std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    throw Error("metrics: cannot resolve metrics_host '" + host + "': " + gai_strerror(rc));
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = errno_text(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // a restart need not wait out TIME_WAIT
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 16) != 0) {
      why = errno_text(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) throw Error("metrics: cannot listen on " + where + " (metrics_host, metrics_port): " + why);
  return fd;
}

}  // namespace

void Metrics::serve(const std::string& host, uint16_t port) {
  if (port == 0) return;
  const int fd = listen_socket(host, port);
  // One internal thread (poll) serves every scrape; scrapes are rare and cheap.
  impl_->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, nullptr, nullptr,
                                   &Impl::answer, this, MHD_OPTION_LISTEN_SOCKET, fd,
                                   MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
                                   MHD_OPTION_END);
  if (!impl_->daemon) {
    close(fd);
    throw Error("metrics: cannot start the HTTP server on " + host + ":" + std::to_string(port));
  }
  impl_->enabled = true;
  spdlog::info("serve.metrics addr={}:{} path=/metrics", host, port);
}

void Metrics::request(const Session& s, const char* service, const wire::Message& m) {
  Impl& m_ = *impl_;
  if (!m_.enabled) return;
  Peer& p = m_.peer_of(s);
  Series& x = m_.series(p, service);
  const uint64_t now = now_ns();
  x.bytes_in += payload_of(m);
  p.identity->last_ns = now;
  m_.dirty = true;
  const uint64_t id = call_id_of(m);
  if (id != 0) {
    p.pending.try_emplace(id, Pending{&x, now});  // a call's later chunks keep its start
  } else if (std::holds_alternative<wire::ClRequest>(m)) {
    ++x.calls;  // an OpenCL operation nobody waits for: done as far as the client knows
  }
}

void Metrics::call_counted(const Session* s, uint64_t call_id, bool ok) {
  Impl& m = *impl_;
  if (!m.enabled || !s) return;
  auto p = m.peers.find(s->peer);
  if (p == m.peers.end()) return;
  Series* x = m.finish(p->second, call_id, ok, now_ns());
  if (!x) return;
  m.dirty = true;
  // A chunked call's result left in pieces, a direct call's data over the copy lanes: neither went
  // through the completions (replied). A failed call's pieces are not counted.
  if (auto c = s->chunked.find(call_id); c != s->chunked.end()) {
    const ChunkedCall& cc = *c->second;
    if (cc.direct) x->bytes_in += cc.payload_bytes;
    if (ok)
      for (const ResultPiece& piece : cc.pieces) x->bytes_out += piece.bytes;
  }
}

void Metrics::replied(const Session& s, const wire::Message& reply, uint64_t bytes) {
  Impl& m = *impl_;
  if (!m.enabled) return;
  auto it = m.peers.find(s.peer);
  if (it == m.peers.end()) return;  // no service message came from this session (pongs)
  Peer& p = it->second;
  const uint64_t now = now_ns();
  if (const auto* r = std::get_if<wire::ClReply>(&reply)) {
    if (Series* x = m.finish(p, r->call_id, r->status >= 0, now)) x->bytes_out += bytes;
  } else if (const auto* n = std::get_if<wire::ClNotice>(&reply)) {
    // An OpenCL command that failed with nobody waiting on it (a failed command that is also
    // waited for counts here and in its reply).
    if (n->status < 0 || n->kind != static_cast<uint8_t>(wire::ClNoticeKind::event_status)) ++m.series(p, "opencl").errors;
  } else if (auto c = p.pending.find(call_id_of(reply)); c != p.pending.end()) {
    c->second.series->bytes_out += bytes;  // counted and timed by call_counted, which follows
  } else {
    return;
  }
  m.dirty = true;
}

void Metrics::session_ended(const Session& s) {
  Impl& m = *impl_;
  if (!m.enabled) return;
  auto it = m.peers.find(s.peer);
  if (it == m.peers.end()) return;
  --it->second.identity->peers;
  it->second.identity->last_ns = now_ns();
  m.peers.erase(it);
  m.dirty = true;
}

void Metrics::publish(const std::unordered_map<PeerId, Session>& sessions, uint64_t connections,
                      uint64_t refused_auth, const std::vector<DeviceHealth>& devices,
                      const ConnectionTables& tables) {
  Impl& m = *impl_;
  if (!m.enabled) return;
  std::map<std::string, uint64_t> open;
  for (const auto& [peer, s] : sessions)
    if (s.state == State::ready) ++open[metrics_identity(s)];
  if (!m.dirty && open == m.last_sessions && connections == m.last_connections && refused_auth == m.last_refused &&
      devices == m.last_devices && tables == m.last_tables)
    return;
  auto snap = std::make_shared<Snapshot>();
  for (const auto& [identity, id] : m.identities)
    for (const auto& [service, x] : id.services) snap->rows.push_back({service, identity, x});
  for (const auto& [peer, p] : m.peers)
    for (const auto& [service, x] : p.used) ++snap->service_sessions[{std::string(service), p.name}];
  snap->sessions = open;
  snap->connections = connections;
  snap->refused_auth = refused_auth;
  snap->devices = devices;
  snap->tables = tables;
  m.last_devices = devices;
  m.last_tables = tables;
  m.last_sessions = std::move(open);
  m.last_connections = connections;
  m.last_refused = refused_auth;
  m.dirty = false;
  std::shared_ptr<const Snapshot> old;
  {
    std::lock_guard lk(m.mu);
    old = std::exchange(m.published, std::move(snap));
  }  // the old copy is freed outside the lock
}

void Metrics::set_restarts(uint64_t count) { impl_->restarts = count; }

std::string Metrics::render() const {
  std::shared_ptr<const Snapshot> snap;
  {
    std::lock_guard lk(impl_->mu);
    snap = impl_->published;
  }
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto labels = [](const std::string& service, const std::string& identity) {
    return "service=\"" + label(service) + "\",identity=\"" + label(identity) + "\"";
  };
  family("outboard_build_info", "gauge", "The server's version.");
  out += "outboard_build_info{version=\"" + label(OUTBOARD_VERSION) + "\"} 1\n";
  family("outboard_start_time_seconds", "gauge", "When the server started, in seconds since the epoch.");
  out += "outboard_start_time_seconds " + number(impl_->start_time) + "\n";
  family("outboard_connections_total", "counter", "Connections accepted.");
  out += "outboard_connections_total " + std::to_string(snap->connections) + "\n";
  family("outboard_refused_authentications_total", "counter", "Connections refused for a wrong secret.");
  out += "outboard_refused_authentications_total " + std::to_string(snap->refused_auth) + "\n";
  family("outboard_server_restarts_total", "counter",
         "Times the server started again in a new process because a GPU fault left its GPUs unusable.");
  out += "outboard_server_restarts_total " + std::to_string(impl_->restarts) + "\n";
  family("outboard_gpu_in_service", "gauge", "1 while the GPU serves, 0 while it is out of service after a fault.");
  for (const auto& d : snap->devices)
    out += "outboard_gpu_in_service{gpu=\"" + std::to_string(d.device) + "\"} " + (d.in_service ? "1" : "0") + "\n";
  family("outboard_gpu_faults_total", "counter", "Faults that poisoned the GPU's context (it was taken out of service).");
  for (const auto& d : snap->devices)
    out += "outboard_gpu_faults_total{gpu=\"" + std::to_string(d.device) + "\"} " + std::to_string(d.faults) + "\n";
  family("outboard_gpu_recoveries_total", "counter", "Times the GPU was rebuilt after a fault and served again.");
  for (const auto& d : snap->devices)
    out += "outboard_gpu_recoveries_total{gpu=\"" + std::to_string(d.device) + "\"} " + std::to_string(d.recoveries) + "\n";
  family("outboard_transport_peers", "gauge", "Connections the transport holds (open, or closing).");
  out += "outboard_transport_peers " + std::to_string(snap->tables.peers) + "\n";
  family("outboard_transport_retiring", "gauge", "Dropped connections kept until their close ends.");
  out += "outboard_transport_retiring " + std::to_string(snap->tables.retiring) + "\n";
  family("outboard_transport_closes_in_flight", "gauge", "Connection closes the transport has not seen end.");
  out += "outboard_transport_closes_in_flight " + std::to_string(snap->tables.closes_in_flight) + "\n";
  family("outboard_open_sessions", "gauge", "Authenticated sessions open, by client identity.");
  for (const auto& [identity, n] : snap->sessions)
    out += "outboard_open_sessions{identity=\"" + label(identity) + "\"} " + std::to_string(n) + "\n";
  family("outboard_open_service_sessions", "gauge",
         "Open sessions that have used a service, by service and client identity.");
  for (const auto& [key, n] : snap->service_sessions)
    out += "outboard_open_service_sessions{" + labels(key.first, key.second) + "} " + std::to_string(n) + "\n";

  struct Counter {
    const char* name;
    const char* help;
    uint64_t Series::*field;
  };
  for (const Counter& c : {Counter{"outboard_calls_total", "Calls answered (and OpenCL operations nobody waits for).",
                                   &Series::calls},
                           Counter{"outboard_call_errors_total", "Calls and OpenCL commands that failed.", &Series::errors},
                           Counter{"outboard_received_bytes_total", "Call data received from clients.", &Series::bytes_in},
                           Counter{"outboard_sent_bytes_total", "Result data sent to clients.", &Series::bytes_out}}) {
    family(c.name, "counter", c.help);
    for (const auto& r : snap->rows)
      out += std::string(c.name) + "{" + labels(r.service, r.identity) + "} " + std::to_string(r.s.*c.field) + "\n";
  }
  family("outboard_call_duration_seconds", "histogram",
         "Time from a call's first message to its answer, on the server.");
  for (const auto& r : snap->rows) {
    const std::string l = labels(r.service, r.identity);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kBounds.size(); ++i) {
      cumulative += r.s.counts[i];
      out += "outboard_call_duration_seconds_bucket{" + l + ",le=\"" + kBoundText[i] + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += "outboard_call_duration_seconds_bucket{" + l + ",le=\"+Inf\"} " + std::to_string(r.s.timed) + "\n";
    out += "outboard_call_duration_seconds_sum{" + l + "} " + number(r.s.seconds) + "\n";
    out += "outboard_call_duration_seconds_count{" + l + "} " + std::to_string(r.s.timed) + "\n";
  }
  return out;
}

}  // namespace outboard::server
