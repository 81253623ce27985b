// A misbehaving client for the server's robustness tests. It speaks the transport directly and
// sends what a buggy or hostile peer might; it exits 0 when the server answered as it should.
//
//   bad_client HOST PORT SECRET_FILE MODE [SECONDS]
//   modes: garbage, truncated, mismatch, oversized, huge-output, unauthenticated, wrong-secret, early-call,
//          stuck, deaf, chunk-size, chunk-twice, chunk-mismatch, chunk-oversized, lapack-bad-routine,
//          lapack-bad-option, lapack-mismatch, lapack-oversized, lapack-huge-output, lapack-bad-pivots,
//          lapack-chunk-twice, lapack-chunk-kinds, lapack-chunk-bad-pivots, direct-without-lanes,
//          direct-wrong-pid, direct-bad-addresses, direct-blas3-without-lanes,
//          direct-blas3-bad-addresses, direct-blas3-gated, quiet-mismatch, quiet-oversized, quiet-unauthenticated, quiet-flags, quiet-counted,
//          sink-unauthenticated, sink-oversized, sink-unknown, sink-counted,
//          fft-unknown-plan, fft-other-session, fft-shape-mismatch, fft-overflow, fft-duplicate-plan,
//          fft-many-plans, fft-release-then-execute, fft-huge-plan, fft-direct-unknown-plan, fft-output-digest (fft_mode,
//          below), cl-malformed, cl-other-session, cl-out-of-bounds, cl-limits, cl-direct, cl-spec-constant (cl_mode),
//          cl-lane-chunks (write data over a lane that breaks the rules; a write whose data never comes),
//          sealed-faults (a server with encrypt = true: plaintext, replayed, reordered, tampered and
//          truncated messages after encryption started, each on a session of its own),
//          lanes-hostile (joins with a wrong proof, to no session, twice, beyond the server's lanes;
//          a joined lane that sends what only a session's own connection may), fill-faults (a fill
//          ping with a payload, one above max_request_bytes)
// The quiet-* modes send streaming pings (no_reply), which the server consumes as they arrive;
// the sink-* modes send the same payloads into the session's sink (no header at all).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/clock.hpp"
#include "common/digest.hpp"
#include "common/secret.hpp"
#include "transport/seal.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

using namespace outboard;

namespace {

struct Peer {
  std::optional<transport::Worker> worker;
  transport::PeerId id = 0;
  std::vector<wire::Message> inbox;
  transport::Buffer last_payload;                   // the last message's payload (a reply's result)
  std::map<uint64_t, transport::Buffer> pieces;     // ReplyChunk payloads by offset
  bool disconnected = false;
  std::string reason;

  Peer(const std::string& host, uint16_t port) {
    transport::Events ev;
    ev.on_disconnect = [this](transport::PeerId, const std::string& why) {
      disconnected = true;
      reason = why;
    };
    ev.on_payload = [](transport::PeerId, std::span<const std::byte>, uint64_t n) {
      return std::optional<transport::Buffer>(transport::Buffer::allocate(n));
    };
    ev.on_message = [this](transport::PeerId, std::vector<std::byte> h, transport::Buffer b, bool) {
      try {
        inbox.push_back(wire::decode(h));
        if (auto* rc = std::get_if<wire::ReplyChunk>(&inbox.back())) pieces[rc->offset] = std::move(b);
        else if (b.size()) last_payload = std::move(b);
      } catch (const std::exception& e) {
        std::printf("undecodable message from server: %s\n", e.what());
      }
    };
    worker.emplace(std::move(ev));
    id = worker->connect(host, port);
  }

  void send(std::span<const std::byte> header, std::vector<transport::Segment> payload = {}) {
    worker->send(id, header, std::move(payload), nullptr);
  }

  // Waits for a message (or the disconnect) for up to `seconds`.
  template <class T>
  std::optional<T> expect(double seconds) {
    uint64_t end = now_ns() + static_cast<uint64_t>(seconds * 1e9);
    while (now_ns() < end) {
      worker->progress();
      for (size_t i = 0; i < inbox.size(); ++i)
        if (auto* m = std::get_if<T>(&inbox[i])) {
          T v = *m;
          inbox.erase(inbox.begin() + static_cast<long>(i));
          return v;
        }
      if (disconnected) return std::nullopt;
    }
    return std::nullopt;
  }

  bool authenticate(const Secret& secret, bool encrypt = false) {
    wire::Hello hello{random_nonce(), "bad_client", "", encrypt};
    send(wire::encode(hello));
    auto ch = expect<wire::Challenge>(5);
    if (!ch) return false;
    server_nonce = ch->server_nonce;
    client_nonce = hello.client_nonce;
    send(wire::encode(wire::Auth{wire::client_proof(secret, ch->server_nonce, hello.client_nonce)}));
    auto r = expect<wire::AuthResult>(5);
    if (r && !r->accepted) std::printf("auth refused: %s\n", r->message.c_str());
    if (r) lane_ports = r->lane_ports;
    if (r && r->accepted && r->encrypted) {
      SessionKeys k = session_keys(secret, hello.client_nonce, ch->server_nonce);
      keys = transport::SealKeys{k.client_to_server, k.server_to_client};
    }
    return r && r->accepted;
  }

  Nonce server_nonce{}, client_nonce{};  // the handshake's
  std::vector<uint16_t> lane_ports;      // the server's lane threads' (AuthResult)
  transport::SealKeys keys;  // an encrypted session's (this client seals by hand: it never protects)

  // The session's sink (wire::SinkRequest); 0 when the server offers none.
  uint32_t open_sink(uint64_t call_id) {
    send(wire::encode(wire::SinkRequest{call_id}));
    auto r = expect<wire::SinkReply>(10);
    if (!r || r->call_id != call_id) return 0;
    if (!r->sink) std::printf("no sink: %s\n", r->message.c_str());
    return r->sink;
  }
  // Sends into a sink; how the sends ended is counted in sink_ok / sink_failed.
  void send_to_sink(uint32_t sink, const void* data, size_t bytes) {
    worker->send_to_sink(id, sink, data, bytes, &sink_done);
  }
  int sink_ok = 0, sink_failed = 0;
  static void sink_sent(void* self, bool ok) { ++(ok ? static_cast<Peer*>(self)->sink_ok : static_cast<Peer*>(self)->sink_failed); }
  const transport::SendDone sink_done{&Peer::sink_sent, this};

  // An acknowledged ping (the server has taken everything before it), then the server's counts
  // for this client must be `pings` and `bytes` (benchmark traffic).
  int expect_counted(const char* what, uint64_t pings, uint64_t bytes) {
    std::vector<std::byte> data(4096);
    send(wire::encode(wire::Ping{7, data.size(), 0}), {{data.data(), data.size()}});
    auto pong = expect<wire::Pong>(10);
    if (!pong || pong->call_id != 7) return std::printf("FAIL %s: no answer to the acknowledged ping\n", what), 1;
    send(wire::encode(wire::StatusRequest{8}));
    auto st = expect<wire::StatusReply>(10);
    if (!st) return std::printf("FAIL %s: no status\n", what), 1;
    auto doc = nlohmann::json::parse(st->json);
    for (const auto& c : doc["clients"])
      if (c["client"] == "bad_client") {
        if (c["pings"] != pings + 1 || c["ping_bytes"] != bytes + data.size())
          return std::printf("FAIL %s: server counted %s\n", what, c.dump().c_str()), 1;
        std::printf("ok %s: %s\n", what, c.dump().c_str());
        return 0;
      }
    return std::printf("FAIL %s: this client is not in the status\n", what), 1;
  }

  // The call must fail with a reply whose message mentions `about`; `how` ends the ok line.
  template <class Reply = wire::LapackReply>
  int expect_failed_call(const char* what, const char* about, const char* how) {
    auto r = expect<Reply>(10);
    if (!r || r->ok || r->message.find(about) == std::string::npos) {
      std::printf("FAIL %s: expected a failed reply about the %s\n", what, about);
      return 1;
    }
    std::printf("server said: %s\nok %s: %s\n", r->message.c_str(), what, how);
    return 0;
  }

  // The server must answer with an error message and close the connection.
  int expect_rejection(const char* what) {
    auto err = expect<wire::ErrorMessage>(10);
    if (!err) {
      std::printf("FAIL %s: no error message from the server\n", what);
      return 1;
    }
    std::printf("server said: %s\n", err->message.c_str());
    uint64_t end = now_ns() + 10'000'000'000ull;
    while (!disconnected && now_ns() < end) worker->progress();
    if (!disconnected) {
      std::printf("FAIL %s: the server kept the connection open\n", what);
      return 1;
    }
    std::printf("ok %s: rejected and disconnected\n", what);
    return 0;
  }
};

wire::Blas3Call dgemm_call(int64_t n) {
  wire::Level3Call c;
  c.routine = wire::Routine::gemm;
  c.scalar = wire::Scalar::d;
  c.m = c.n = c.k = n;
  c.alpha = {1, 0};
  c.output_sent = false;
  return {1, c, wire::request_bytes(c), {}};
}

wire::LapackRequest lapack_call(wire::LapackRoutine r, int64_t m, int64_t n, int64_t nrhs) {
  wire::LapackCall c;
  c.routine = r;
  c.scalar = wire::Scalar::d;
  c.m = m, c.n = n, c.nrhs = nrhs;
  return {1, c, wire::request_bytes(c), {}};
}

// Offset of the LAPACK call's first byte (its routine id) in an encoded LapackRequest.
constexpr size_t kLapackCallOffset = 8 + 8;

// Malformed LAPACK requests. Returns the exit status.
int lapack_mode(Peer& p, const std::string& mode) {
  using R = wire::LapackRoutine;
  if (mode == "lapack-bad-routine" || mode == "lapack-bad-option") {  // a header that does not decode
    auto q = lapack_call(R::gesv, 0, 4, 1);
    auto h = wire::encode(q);
    if (mode == "lapack-bad-routine") h[kLapackCallOffset] = std::byte{200};
    else h[kLapackCallOffset + 2] = std::byte{'X'};  // trans of gesv must be 'N'
    std::vector<double> data(q.payload_bytes / 8, 1.0);
    p.send(h, {{data.data(), q.payload_bytes}});
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "lapack-mismatch") {  // announces A and B of dgesv (4x4, 4x1) but sends fewer bytes
    std::vector<double> data(7, 1.0);
    p.send(wire::encode(lapack_call(R::gesv, 0, 4, 1)), {{data.data(), data.size() * sizeof(double)}});
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "lapack-oversized") {  // a consistent dgesv larger than max_request_bytes
    auto q = lapack_call(R::gesv, 0, 400, 1);
    std::vector<double> data(q.payload_bytes / 8, 1.0);
    p.send(wire::encode(q), {{data.data(), q.payload_bytes}});
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "lapack-huge-output") {  // gesvd of a 0 x 100000 matrix: no input, 80 GB of VT
    auto q = lapack_call(R::gesvd, 0, 100000, 0);
    q.call.jobvt = 'A';
    q.payload_bytes = wire::request_bytes(q.call);
    p.send(wire::encode(q));
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "lapack-bad-pivots") {  // dgetrs with pivots out of range: refused, not executed
    auto q = lapack_call(R::getrs, 0, 4, 1);
    std::vector<std::byte> data(q.payload_bytes);
    std::vector<double> a(16, 1.0);
    std::memcpy(data.data(), a.data(), 128);
    const int32_t ipiv[4] = {1, 2, 1000000, -5};
    std::memcpy(data.data() + 128, ipiv, 16);
    p.send(wire::encode(q), {{data.data(), data.size()}});
    auto r = p.expect<wire::LapackReply>(10);
    if (!r || r->ok || r->message.find("pivot") == std::string::npos) {
      std::printf("FAIL %s: expected a failed reply about the pivots\n", mode.c_str());
      return 1;
    }
    std::printf("server said: %s\nok %s: refused with a clear error\n", r->message.c_str(), mode.c_str());
    // The session goes on: a good call is still served.
    auto good = lapack_call(R::getrs, 0, 4, 1);
    const int32_t fine[4] = {1, 2, 3, 4};
    std::memcpy(data.data() + 128, fine, 16);
    std::vector<double> eye(16, 0.0);
    for (int i = 0; i < 4; ++i) eye[i * 5] = 1;
    std::memcpy(data.data(), eye.data(), 128);
    p.send(wire::encode(good), {{data.data(), data.size()}});
    auto r2 = p.expect<wire::LapackReply>(10);
    if (!r2 || !r2->ok || r2->info != 0) {
      std::printf("FAIL %s: a valid call after the refused one was not served\n", mode.c_str());
      return 1;
    }
    return 0;
  }
  // Chunked LAPACK calls: checked as BLAS chunks are, and their inputs' values too.
  auto chunk = [](const wire::LapackRequest& q, uint64_t index) {
    return wire::LapackChunk{7, q.call, q.payload_bytes, wire::kMinChunkBytes, index};
  };
  std::vector<std::byte> data(1 << 20);
  if (mode == "lapack-chunk-twice") {  // the same chunk of a dgesv twice
    auto c = chunk(lapack_call(R::gesv, 0, 200, 1), 0);
    p.send(wire::encode(c), {{data.data(), wire::chunk_length(c)}});
    p.send(wire::encode(c), {{data.data(), wire::chunk_length(c)}});
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "lapack-chunk-kinds") {  // a BLAS chunk and a LAPACK chunk under one call id
    wire::Level3Call g = dgemm_call(128).call;
    wire::CallChunk b{7, g, wire::request_bytes(g), wire::kMinChunkBytes, 0};
    auto c = chunk(lapack_call(R::gesv, 0, 200, 1), 1);
    p.send(wire::encode(b), {{data.data(), wire::chunk_length(b)}});
    p.send(wire::encode(c), {{data.data(), wire::chunk_length(c)}});
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "lapack-chunk-bad-pivots") {  // a chunked dgetrs whose pivots are out of range
    auto q = lapack_call(R::getrs, 0, 100, 1);  // A 80000 bytes, ipiv 400, B 800: two chunks
    const int32_t bad = 1000;
    for (int i = 0; i < 100; ++i) std::memcpy(data.data() + 80000 + 4 * i, &bad, 4);
    for (uint64_t i = 0; i < 2; ++i) {
      auto c = chunk(q, i);
      p.send(wire::encode(c), {{data.data() + wire::chunk_offset(c), wire::chunk_length(c)}});
    }
    return p.expect_failed_call(mode.c_str(), "pivot", "refused with a clear error");
  }
  // The direct path (the server copies the arrays itself).
  wire::DirectLapack direct{7, lapack_call(R::gesv, 0, 200, 1).call, {}, {}, {}, false};
  transport::Registration reg = p.worker->register_memory(data.data(), data.size());
  direct.keys = {reg.key()};
  auto lanes = [&](uint32_t pid) {
    p.send(wire::encode(wire::LanesRequest{3, p.worker->address(), pid, reinterpret_cast<uint64_t>(p.server_nonce.data())}));
    return p.expect<wire::LanesReply>(10);
  };
  if (mode == "direct-without-lanes") {  // a direct call before any LanesRequest
    direct.input = {{reinterpret_cast<uint64_t>(data.data()), wire::request_bytes(direct.call), 0}};
    direct.output = {{reinterpret_cast<uint64_t>(data.data()), wire::reply_bytes(direct.call), 0}};
    p.send(wire::encode(direct));
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "direct-wrong-pid") {  // names another process (init): never copied with CMA
    auto r = lanes(1);
    if (!r || r->lanes == 0 || r->message != "ucx") {
      std::printf("FAIL %s: expected lanes through UCX, got '%s'\n", mode.c_str(), r ? r->message.c_str() : "nothing");
      return 1;
    }
    std::printf("server said: copies through %s\nok %s: the pid was not believed\n", r->message.c_str(), mode.c_str());
    return 0;
  }
  if (mode == "direct-bad-addresses") {  // extents in unmapped memory: the copies fail, the call fails
    auto r = lanes(static_cast<uint32_t>(getpid()));
    if (!r || r->message != "cma") std::printf("note: lanes '%s'\n", r ? r->message.c_str() : "none");
    if (!r || r->lanes == 0) return std::printf("FAIL %s: no lanes\n", mode.c_str()), 1;
    direct.input = {{0x1000, wire::request_bytes(direct.call), 0}};
    direct.output = {{0x1000, wire::reply_bytes(direct.call), 0}};
    p.send(wire::encode(direct));
    return p.expect_failed_call(mode.c_str(), "copying", "failed with a clear error");
  }
  // Level-3 BLAS on the direct path: a dgemm of 128 with beta = 1 (C is read, so the call is
  // gated), A, B and C at the start of `data`, the result into its own range further on.
  wire::Level3Call g = dgemm_call(128).call;
  g.beta = {1, 0};
  g.output_sent = true;
  const uint64_t g_in = wire::request_bytes(g), g_out = wire::reply_bytes(g);
  auto* base = data.data();
  std::byte* result = base + g_in;
  wire::DirectBlas3 gemm{8, g, {reg.key()}, {{reinterpret_cast<uint64_t>(base), g_in, 0}},
                         {{reinterpret_cast<uint64_t>(result), g_out, 0}}, true};
  if (mode == "direct-blas3-without-lanes") {
    p.send(wire::encode(gemm));
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "direct-blas3-bad-addresses") {  // the matrices in unmapped memory: the call fails
    auto r = lanes(static_cast<uint32_t>(getpid()));
    if (!r || r->lanes == 0) return std::printf("FAIL %s: no lanes\n", mode.c_str()), 1;
    gemm.input = {{0x1000, g_in, 0}};
    gemm.output = {{0x1000, g_out, 0}};
    gemm.gated = false;
    p.send(wire::encode(gemm));
    return p.expect_failed_call<wire::CallReply>(mode.c_str(), "copying", "failed with a clear error");
  }
  if (mode == "direct-blas3-gated") {  // nothing is written into C before the client's Proceed
    auto r = lanes(static_cast<uint32_t>(getpid()));
    if (!r || r->lanes == 0) return std::printf("FAIL %s: no lanes\n", mode.c_str()), 1;
    const size_t n = 128 * 128;
    auto* a = reinterpret_cast<double*>(base);
    for (size_t i = 0; i < 3 * n; ++i) a[i] = 1.0;  // A = B = C = ones: the result is 129 everywhere
    auto* out = reinterpret_cast<double*>(result);
    for (size_t i = 0; i < n; ++i) out[i] = -1.0;
    p.send(wire::encode(gemm));
    if (!p.expect<wire::InputTaken>(10)) return std::printf("FAIL %s: no InputTaken\n", mode.c_str()), 1;
    const uint64_t end = now_ns() + 500'000'000;  // time enough for the server to compute and write
    while (now_ns() < end) p.worker->progress();
    for (size_t i = 0; i < n; ++i)
      if (out[i] != -1.0) return std::printf("FAIL %s: C written before Proceed\n", mode.c_str()), 1;
    p.send(wire::encode(wire::Proceed{8}));
    auto reply = p.expect<wire::CallReply>(10);
    if (!reply || !reply->ok) return std::printf("FAIL %s: the call failed after Proceed\n", mode.c_str()), 1;
    for (size_t i = 0; i < n; ++i)
      if (out[i] != 129.0) return std::printf("FAIL %s: wrong result %g at %zu\n", mode.c_str(), out[i], i), 1;
    std::printf("ok %s: C untouched until Proceed, then the right result\n", mode.c_str());
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}


// ---- FFT: plans are per-session objects named by ids; executions must name one of the session's
// plans, of the shape they repeat; malformed shapes do not decode. ----

wire::FftShape c2c_shape(int64_t n) {
  wire::FftShape s;
  s.precision = wire::FftPrecision::f64;
  s.kind = wire::FftKind::c2c;
  s.sign = -1;
  s.n = {n};
  return s;
}

// x[j] = exp(2 pi i m j / n) + 0.5 exp(2 pi i 3m j / n): its forward transform is n at bin m,
// n/2 at bin 3m, zero elsewhere.
std::vector<double> tones(int64_t n, int64_t m) {
  std::vector<double> x(2 * size_t(n));
  for (int64_t j = 0; j < n; ++j) {
    const double a = 2 * M_PI * double((m * j) % n) / double(n), b = 2 * M_PI * double((3 * m * j) % n) / double(n);
    x[2 * j] = std::cos(a) + 0.5 * std::cos(b);
    x[2 * j + 1] = std::sin(a) + 0.5 * std::sin(b);
  }
  return x;
}
bool tones_spectrum_ok(const std::byte* out, int64_t n, int64_t m) {
  std::vector<double> y(2 * size_t(n));
  std::memcpy(y.data(), out, y.size() * sizeof(double));
  double err = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double want = k == m ? double(n) : k == (3 * m) % n ? double(n) / 2 : 0;
    err = std::max(err, std::hypot(y[2 * k] - want, y[2 * k + 1]));
  }
  if (err > 1e-8 * double(n)) std::printf("FFT result off by %g\n", err);
  return err <= 1e-8 * double(n);
}

struct FftCounts {
  uint64_t c2c = 0, errors = 0, fft_refusals = 0;
};
std::optional<FftCounts> fft_counts(Peer& p) {
  p.send(wire::encode(wire::StatusRequest{99}));
  auto st = p.expect<wire::StatusReply>(10);
  if (!st) return std::nullopt;
  auto doc = nlohmann::json::parse(st->json);
  FftCounts c;
  c.c2c = doc["calls_by_routine"].value("fftw_c2c", uint64_t(0));
  c.fft_refusals = doc["calls_by_routine"].value("fft", uint64_t(0));
  c.errors = doc["errors"].get<uint64_t>();
  return c;
}

void fft_plan(Peer& p, uint64_t id, const wire::FftShape& s) { p.send(wire::encode(wire::FftPlan{id, s})); }

// A whole execution; its reply, the result (when ok) in p.last_payload.
std::optional<wire::FftReply> fft_execute(Peer& p, uint64_t call, uint64_t plan, const wire::FftShape& s,
                                          const std::vector<double>& x) {
  p.last_payload = {};
  const uint64_t bytes = wire::input_bytes(s);
  p.send(wire::encode(wire::FftExecute{call, plan, s, bytes, {}}), {{x.data(), bytes}});
  auto r = p.expect<wire::FftReply>(20);
  if (r && r->call_id != call) std::printf("reply to call %llu, not %llu\n", (unsigned long long)r->call_id, (unsigned long long)call);
  return r && r->call_id == call ? r : std::nullopt;
}

// A chunked execution (all its chunks); the result, when ok, is reassembled from p.pieces into `out`.
std::optional<wire::FftReply> fft_chunked(Peer& p, uint64_t call, uint64_t plan, const wire::FftShape& s,
                                          const std::vector<double>& x, std::vector<std::byte>* out = nullptr) {
  p.pieces.clear();
  const uint64_t bytes = wire::input_bytes(s);
  const uint64_t count = wire::chunk_count(bytes, wire::kMinChunkBytes);
  for (uint64_t i = 0; i < count; ++i) {
    wire::FftChunk c{call, plan, s, bytes, wire::kMinChunkBytes, i};
    p.send(wire::encode(c), {{reinterpret_cast<const std::byte*>(x.data()) + wire::chunk_offset(c), wire::chunk_length(c)}});
  }
  auto r = p.expect<wire::FftReply>(20);
  if (!r || r->call_id != call) return std::nullopt;
  if (out) {
    out->assign(wire::output_bytes(s), std::byte{0});
    uint64_t got = 0;
    for (auto& [offset, b] : p.pieces) {
      if (offset + b.size() > out->size()) return std::printf("a result piece out of range\n"), std::nullopt;
      std::memcpy(out->data() + offset, b.data(), b.size());
      got += b.size();
    }
    if (r->ok && got != out->size()) return std::printf("result pieces cover %llu of %zu bytes\n", (unsigned long long)got, out->size()), std::nullopt;
  }
  return r;
}

// The reply must be a failure mentioning `about`, and the server's counters must show nothing
// executed (fftw_c2c unchanged) and the error counted.
int expect_fft_refused(Peer& p, const char* what, const std::optional<wire::FftReply>& r, const char* about,
                       const FftCounts& before, uint64_t refusals) {
  if (!r) return std::printf("FAIL %s: no FftReply\n", what), 1;
  if (r->ok || r->message.find(about) == std::string::npos)
    return std::printf("FAIL %s: expected a failed reply about '%s', got ok=%d '%s'\n", what, about, int(r->ok), r->message.c_str()), 1;
  if (r->payload_bytes != 0) return std::printf("FAIL %s: a refused execution carries a result\n", what), 1;
  auto after = fft_counts(p);
  if (!after) return std::printf("FAIL %s: no status (the session did not go on)\n", what), 1;
  if (after->c2c != before.c2c)
    return std::printf("FAIL %s: fftw_c2c calls went from %llu to %llu: something was executed (or counted as such)\n",
                       what, (unsigned long long)before.c2c, (unsigned long long)after->c2c), 1;
  if (after->errors != before.errors + refusals || after->fft_refusals != before.fft_refusals + refusals)
    return std::printf("FAIL %s: errors %llu -> %llu, refusals %llu -> %llu (expected +%llu)\n", what,
                       (unsigned long long)before.errors, (unsigned long long)after->errors,
                       (unsigned long long)before.fft_refusals, (unsigned long long)after->fft_refusals,
                       (unsigned long long)refusals), 1;
  std::printf("server said: %s\n", r->message.c_str());
  return 0;
}

// A valid plan and executions on it (whole and chunked) are served with the right result.
int expect_fft_served(Peer& p, const char* what, uint64_t plan, bool make_plan) {
  const int64_t n = 256, big = 16384;  // big: 256 KiB of input, 4 chunks
  if (make_plan) fft_plan(p, plan, c2c_shape(n));
  auto before = fft_counts(p);
  if (!before) return std::printf("FAIL %s: no status\n", what), 1;
  auto r = fft_execute(p, 500 + plan, plan, c2c_shape(n), tones(n, 5));
  if (!r || !r->ok || r->payload_bytes != wire::output_bytes(c2c_shape(n)) || p.last_payload.size() != r->payload_bytes)
    return std::printf("FAIL %s: a valid execution was not served (%s)\n", what, r ? r->message.c_str() : "no reply"), 1;
  if (!tones_spectrum_ok(p.last_payload.data(), n, 5)) return std::printf("FAIL %s: wrong result\n", what), 1;
  fft_plan(p, plan + 1000, c2c_shape(big));
  std::vector<std::byte> out;
  auto rc = fft_chunked(p, 600 + plan, plan + 1000, c2c_shape(big), tones(big, 7), &out);
  if (!rc || !rc->ok) return std::printf("FAIL %s: a valid chunked execution was not served (%s)\n", what, rc ? rc->message.c_str() : "no reply"), 1;
  if (!tones_spectrum_ok(out.data(), big, 7)) return std::printf("FAIL %s: wrong chunked result\n", what), 1;
  auto after = fft_counts(p);
  if (!after || after->c2c != before->c2c + 2) return std::printf("FAIL %s: the valid executions were not counted\n", what), 1;
  return 0;
}

int fft_mode(Peer& p, const std::string& mode, const std::string& host, uint16_t port, const Secret& secret) {
  const char* what = mode.c_str();
  const wire::FftShape s256 = c2c_shape(256), s16k = c2c_shape(16384);
  if (mode == "fft-unknown-plan") {  // executions (whole and chunked) naming a plan never made
    auto before = fft_counts(p);
    if (!before) return std::printf("FAIL %s: no status\n", what), 1;
    if (int rc = expect_fft_refused(p, what, fft_execute(p, 1, 77, s256, tones(256, 1)), "unknown FFT plan", *before, 1)) return rc;
    before = fft_counts(p);
    if (int rc = expect_fft_refused(p, what, fft_chunked(p, 2, 78, s16k, tones(16384, 1)), "unknown FFT plan", *before, 1)) return rc;
    if (int rc = expect_fft_served(p, what, 77, true)) return rc;
    std::printf("ok %s: refused with an error reply, nothing executed, the session goes on\n", what);
    return 0;
  }
  if (mode == "fft-direct-unknown-plan") {  // the direct path naming a plan never made, then a real one
    p.send(wire::encode(wire::LanesRequest{3, p.worker->address(), static_cast<uint32_t>(getpid()),
                                           reinterpret_cast<uint64_t>(p.server_nonce.data())}));
    auto lanes = p.expect<wire::LanesReply>(10);
    if (!lanes || lanes->lanes == 0) return std::printf("FAIL %s: no copy lanes\n", what), 1;
    std::vector<double> in = tones(256, 5), out(2 * 256, -1.0);
    transport::Registration rin = p.worker->register_memory(in.data(), in.size() * 8);
    transport::Registration rout = p.worker->register_memory(out.data(), out.size() * 8);
    auto direct = [&](uint64_t call, uint64_t plan) {
      p.send(wire::encode(wire::DirectFft{call, plan, s256, {rin.key(), rout.key()},
                                          {{reinterpret_cast<uint64_t>(in.data()), 4096, 0}},
                                          {{reinterpret_cast<uint64_t>(out.data()), 4096, 1}}}));
      return p.expect<wire::FftReply>(20);
    };
    auto before = fft_counts(p);
    if (!before) return std::printf("FAIL %s: no status\n", what), 1;
    auto r = direct(1, 99);
    if (int rc = expect_fft_refused(p, what, r, "unknown FFT plan", *before, 1)) return rc;
    if (out[0] != -1.0) return std::printf("FAIL %s: a refused direct call wrote the output\n", what), 1;
    fft_plan(p, 7, s256);
    r = direct(2, 7);
    if (!r || !r->ok || !tones_spectrum_ok(reinterpret_cast<const std::byte*>(out.data()), 256, 5))
      return std::printf("FAIL %s: the session's own direct execution failed\n", what), 1;
    std::printf("ok %s: refused with an error reply, nothing written; its own plan runs on the direct path\n", what);
    return 0;
  }
  if (mode == "fft-other-session") {  // B names A's plan: never B's
    fft_plan(p, 5, s256);
    fft_plan(p, 6, s16k);
    if (!fft_counts(p)) return std::printf("FAIL %s: no status for A\n", what), 1;  // A's plans are in
    Peer b(host, port);
    if (!b.authenticate(secret)) return std::printf("FAIL %s: B could not authenticate\n", what), 1;
    auto before = fft_counts(b);
    if (!before) return std::printf("FAIL %s: no status\n", what), 1;
    if (int rc = expect_fft_refused(b, what, fft_execute(b, 1, 5, s256, tones(256, 1)), "unknown FFT plan", *before, 1)) return rc;
    before = fft_counts(b);
    if (int rc = expect_fft_refused(b, what, fft_chunked(b, 2, 6, s16k, tones(16384, 1)), "unknown FFT plan", *before, 1)) return rc;
    // A's own plan still works.
    auto r = fft_execute(p, 3, 5, s256, tones(256, 9));
    if (!r || !r->ok || !tones_spectrum_ok(p.last_payload.data(), 256, 9))
      return std::printf("FAIL %s: A's execution of its own plan failed\n", what), 1;
    std::printf("ok %s: B cannot execute A's plans; A's still work\n", what);
    return 0;
  }
  if (mode == "fft-shape-mismatch") {  // an existing plan, but another shape repeated
    fft_plan(p, 5, s256);
    fft_plan(p, 6, c2c_shape(8192));
    auto before = fft_counts(p);
    if (!before) return std::printf("FAIL %s: no status\n", what), 1;
    if (int rc = expect_fft_refused(p, what, fft_execute(p, 1, 5, c2c_shape(512), tones(512, 1)), "FFT plan 5 is", *before, 1)) return rc;
    wire::FftShape inverse = s256;
    inverse.sign = 1;
    before = fft_counts(p);
    // The message must say how they differ (the direction: shape names alone read the same).
    if (int rc = expect_fft_refused(p, what, fft_execute(p, 2, 5, inverse, tones(256, 1)), "sign -1, not dft c2c f64 256 sign 1", *before, 1)) return rc;
    before = fft_counts(p);
    if (int rc = expect_fft_refused(p, what, fft_chunked(p, 3, 6, s16k, tones(16384, 1)), "FFT plan 6 is", *before, 1)) return rc;
    if (int rc = expect_fft_served(p, what, 5, false)) return rc;
    std::printf("ok %s: refused with an error reply, nothing executed, the session goes on\n", what);
    return 0;
  }
  if (mode == "fft-output-digest") {  // output digests a client makes up (wire::FftExecute::output_digest)
    fft_plan(p, 6, s256);
    const std::vector<double> x = tones(256, 3);
    const uint64_t bytes = wire::input_bytes(s256);
    auto execute = [&](uint64_t call, const std::array<uint64_t, 2>& digest) {
      wire::FftExecute q{call, 6, s256, bytes, {}};
      q.output_known = true, q.output_digest = digest;
      p.last_payload = {};
      p.send(wire::encode(q), {{x.data(), bytes}});
      return p.expect<wire::FftReply>(20);
    };
    // A digest that is not the result's: the result comes back, right.
    auto r = execute(1, {1, 2});
    if (!r || !r->ok || r->output_unchanged || !tones_spectrum_ok(p.last_payload.data(), 256, 3))
      return std::printf("FAIL %s: a wrong output digest: the result not sent, or wrong\n", what), 1;
    // The result's own digest (the client holds it): not sent, and only this client is concerned.
    const Digest right = content_digest(p.last_payload.data(), p.last_payload.size(), 1);
    r = execute(2, right);
    if (!r || !r->ok || !r->output_unchanged || r->payload_bytes != 0 || p.last_payload.size() != 0)
      return std::printf("FAIL %s: the result's own digest: the result sent, or the call failed\n", what), 1;
    if (int rc = expect_fft_served(p, what, 7, true)) return rc;
    std::printf("ok %s: a made-up digest gets the result; the result's own digest none; the session goes on\n", what);
    return 0;
  }
  if (mode == "fft-release-then-execute") {
    fft_plan(p, 5, s256);
    auto r = fft_execute(p, 1, 5, s256, tones(256, 2));
    if (!r || !r->ok || !tones_spectrum_ok(p.last_payload.data(), 256, 2)) return std::printf("FAIL %s: first execution failed\n", what), 1;
    p.send(wire::encode(wire::FftRelease{5}));
    auto before = fft_counts(p);
    if (!before) return std::printf("FAIL %s: no status\n", what), 1;
    if (int rc = expect_fft_refused(p, what, fft_execute(p, 2, 5, s256, tones(256, 2)), "unknown FFT plan", *before, 1)) return rc;
    p.send(wire::encode(wire::FftRelease{5}));   // released twice, and a plan never made: ignored
    p.send(wire::encode(wire::FftRelease{4242}));
    if (int rc = expect_fft_served(p, what, 5, true)) return rc;  // the id may be used again
    std::printf("ok %s: a released plan cannot be executed; its id may be planned again\n", what);
    return 0;
  }
  if (mode == "fft-overflow") {  // shapes that do not decode: each on a session of its own
    struct Case {
      const char* name;
      wire::FftShape shape;
      const char* about;
    };
    std::vector<Case> cases;
    auto add = [&](const char* name, const char* about, auto change) {
      wire::FftShape s = c2c_shape(256);
      change(s);
      cases.push_back({name, s, about});
    };
    add("product overflows", "too many elements", [](wire::FftShape& s) { s.n = {int64_t(1) << 20, int64_t(1) << 20, int64_t(1) << 20}; });
    add("product overflows int64", "too many elements", [](wire::FftShape& s) { s.n = {int64_t(1) << 40, int64_t(1) << 40, int64_t(1) << 40}; });
    add("batch overflows", "too many elements", [](wire::FftShape& s) { s.n = {int64_t(1) << 30}; s.batch = int64_t(1) << 30; });
    add("rank 9", "rank 9", [](wire::FftShape& s) { s.n.assign(9, 2); });
    add("rank 0", "rank 0", [](wire::FftShape& s) { s.n.clear(); });
    add("n = 0", "size 0", [](wire::FftShape& s) { s.n = {16, 0}; });
    add("n < 0", "size -4", [](wire::FftShape& s) { s.n = {-4}; });
    add("batch 0", "batch 0", [](wire::FftShape& s) { s.batch = 0; });
    add("r2r kinds on c2c", "r2r kinds", [](wire::FftShape& s) { s.r2r_kinds = {3}; });
    add("sign 0 on c2c", "sign", [](wire::FftShape& s) { s.sign = 0; });
    add("unknown kind", "kind", [](wire::FftShape& s) { s.kind = wire::FftKind(9); });
    for (const Case& c : cases) {
      Peer q(host, port);
      if (!q.authenticate(secret)) return std::printf("FAIL %s (%s): could not authenticate\n", what, c.name), 1;
      q.send(wire::encode(wire::FftPlan{5, c.shape}));
      auto err = q.expect<wire::ErrorMessage>(10);
      if (!err || err->message.find("malformed request") == std::string::npos || err->message.find(c.about) == std::string::npos)
        return std::printf("FAIL %s (%s): expected a malformed-request error about '%s', got '%s'\n", what, c.name, c.about,
                           err ? err->message.c_str() : "nothing"), 1;
      std::printf("server said (%s): %s\n", c.name, err->message.c_str());
      uint64_t end = now_ns() + 10'000'000'000ull;
      while (!q.disconnected && now_ns() < end) q.worker->progress();
      if (!q.disconnected) return std::printf("FAIL %s (%s): the server kept the connection open\n", what, c.name), 1;
    }
    // The same shapes in executions (header and payload) are refused too: on a session of their own.
    {
      Peer q(host, port);
      if (!q.authenticate(secret)) return std::printf("FAIL %s: could not authenticate\n", what), 1;
      wire::FftShape bad = c2c_shape(256);
      bad.batch = 0;
      std::vector<double> x(512);
      q.send(wire::encode(wire::FftExecute{1, 5, bad, 4096, {}}), {{x.data(), 4096}});
      if (q.expect_rejection("fft-overflow (execute)")) return 1;
    }
    std::printf("ok %s: %zu malformed shapes rejected as malformed requests\n", what, cases.size());
    return 0;
  }
  if (mode == "fft-huge-plan") {  // a valid plan whose executions are over max_request_bytes: kept, never prepared
    auto over_limit = [&]() -> std::optional<uint64_t> {
      p.send(wire::encode(wire::StatusRequest{98}));
      auto st = p.expect<wire::StatusReply>(10);
      if (!st) return std::nullopt;
      return nlohmann::json::parse(st->json)["fft"].value("plans_over_limit", uint64_t(0));
    };
    const auto before = over_limit();
    fft_plan(p, 5, c2c_shape(int64_t(1) << 30));  // 16 GiB in, 16 GiB out
    const auto after = over_limit();
    if (!before || !after || *after != *before + 1)
      return std::printf("FAIL %s: the plan over the server's limits was not set aside unprepared\n", what), 1;
    if (int rc = expect_fft_served(p, what, 6, true)) return rc;
    std::printf("ok %s: a plan over max_request_bytes is not prepared; the session goes on\n", what);
    return 0;
  }
  if (mode == "fft-duplicate-plan") {
    fft_plan(p, 5, s256);
    fft_plan(p, 5, s256);
    auto err = p.expect<wire::ErrorMessage>(10);
    if (!err || err->message.find("FFT plan id 5 already in use") == std::string::npos)
      return std::printf("FAIL %s: expected an error about plan id 5 in use, got '%s'\n", what, err ? err->message.c_str() : "nothing"), 1;
    p.inbox.insert(p.inbox.begin(), wire::Message(*err));
    return p.expect_rejection(what);
  }
  if (mode == "fft-many-plans") {  // the per-session limit, then one more
    const uint64_t limit = 4096;
    for (uint64_t id = 1; id <= limit; ++id) {
      fft_plan(p, id, c2c_shape(64 + int64_t(id % 4)));
      if (id % 64 == 0) p.worker->progress();
    }
    if (!fft_counts(p)) return std::printf("FAIL %s: %llu plans were not accepted\n", what, (unsigned long long)limit), 1;
    auto r = fft_execute(p, 1, limit, c2c_shape(64), tones(64, 3));
    if (!r || !r->ok || !tones_spectrum_ok(p.last_payload.data(), 64, 3))
      return std::printf("FAIL %s: the session's last plan could not be executed\n", what), 1;
    fft_plan(p, limit + 1, s256);
    auto err = p.expect<wire::ErrorMessage>(10);
    if (!err || err->message.find("too many FFT plans") == std::string::npos)
      return std::printf("FAIL %s: expected an error about too many plans, got '%s'\n", what, err ? err->message.c_str() : "nothing"), 1;
    p.inbox.insert(p.inbox.begin(), wire::Message(*err));
    return p.expect_rejection(what);
  }
  std::fprintf(stderr, "unknown mode %s\n", what);
  return 2;
}


// ---- remote OpenCL (wire/opencl.hpp) ----
// Codes from CL/cl.h (this program does not include OpenCL's headers).
constexpr int32_t kClInvalidValue = -30, kClInvalidMemObject = -38, kClInvalidCommandQueue = -36,
                  kClInvalidEventWaitList = -57, kClInvalidProgram = -44;

// A session with a context, a queue and a 4096-byte buffer holding 0, 1, 2, ... (ids from `base`).
struct ClSetup {
  wire::ClId context, queue, buffer;
  std::vector<uint8_t> data = std::vector<uint8_t>(4096);
};
std::optional<ClSetup> cl_setup(Peer& p, wire::ClId base) {
  p.send(wire::encode(wire::ClRequest{1, wire::ClGetPlatforms{}, 0}));
  auto r = p.expect<wire::ClReply>(10);
  if (!r || r->status != 0) return std::nullopt;
  auto snap = wire::decode_cl_snapshot({p.last_payload.data(), r->payload_bytes});
  if (snap.platforms.empty() || snap.platforms[0].devices.empty()) return std::nullopt;
  const wire::ClId platform = snap.platforms[0].id, device = snap.platforms[0].devices[0].id;
  ClSetup s{base, base + 1, base + 2};
  for (size_t i = 0; i < s.data.size(); ++i) s.data[i] = static_cast<uint8_t>(i);
  p.send(wire::encode(wire::ClRequest{0, wire::ClCreateContext{s.context, {device}, {0x1084, platform}}, 0}));
  p.send(wire::encode(wire::ClRequest{0, wire::ClCreateQueue{s.queue, s.context, device, {}}, 0}));
  p.send(wire::encode(wire::ClRequest{0, wire::ClCreateBuffer{s.buffer, s.context, 1 | 32, 4096}, 4096}),
         {{s.data.data(), s.data.size()}});  // CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR
  return s;
}

wire::ClRegion cl_linear(uint64_t offset, uint64_t size) {
  wire::ClRegion r;
  r.origin = {offset, 0, 0};
  r.region = {size, 1, 1};
  return r;
}

// An answered read: its status, and its data when it succeeded.
std::optional<std::pair<int32_t, std::vector<uint8_t>>> cl_read(Peer& p, uint64_t call, wire::ClId queue, wire::ClId mem,
                                                                 const wire::ClRegion& at) {
  p.send(wire::encode(wire::ClRequest{call, wire::ClRead{{queue, {}, 0}, mem, at}, 0}));
  auto r = p.expect<wire::ClReply>(10);
  if (!r || r->call_id != call) return std::nullopt;
  std::vector<uint8_t> data;
  if (r->payload_bytes) {
    auto* d = reinterpret_cast<const uint8_t*>(p.last_payload.data());
    data.assign(d, d + r->payload_bytes);
  }
  return std::pair{r->status, data};
}

int cl_expect_status(const char* what, const char* case_name, const std::optional<std::pair<int32_t, std::vector<uint8_t>>>& r,
                     int32_t status) {
  if (!r || r->first != status || !r->second.empty())
    return std::printf("FAIL %s: %s: expected status %d and no data, got %d\n", what, case_name, status, r ? r->first : 0), 1;
  std::printf("server said: %s -> %d\n", case_name, status);
  return 0;
}

// The session's buffer still holds what it was made with.
int cl_expect_intact(Peer& p, const char* what, const ClSetup& s) {
  auto back = cl_read(p, 99, s.queue, s.buffer, cl_linear(0, 4096));
  if (!back || back->first != 0 || back->second != s.data)
    return std::printf("FAIL %s: the session's buffer was changed or cannot be read\n", what), 1;
  return 0;
}

// Write data over a lane (wire::ClChunk, OUTBOARD_CL_LANES): a session whose chunks break the
// rules is ended, and only it; a write whose data never comes holds its session's thread only
// until the session ends. Each case on a session of its own, with one lane joined.
int cl_lane_chunks_mode(const std::string& host, uint16_t port, const Secret& secret) {
  const char* what = "cl-lane-chunks";
  const wire::ClId base = wire::kFirstClientId + 300;
  struct Laned {
    std::unique_ptr<Peer> main, lane;
    ClSetup setup;
  };
  auto laned = [&]() -> std::optional<Laned> {
    Laned l;
    l.main = std::make_unique<Peer>(host, port);
    if (!l.main->authenticate(secret)) return std::nullopt;
    auto s = cl_setup(*l.main, base);
    if (!s) return std::nullopt;
    l.setup = *s;
    const uint16_t lane_port = l.main->lane_ports.empty() ? port : l.main->lane_ports[0];
    l.lane = std::make_unique<Peer>(host, lane_port);
    l.lane->send(wire::encode(
        wire::JoinSession{l.main->server_nonce, 1, wire::lane_proof(secret, l.main->server_nonce, l.main->client_nonce, 1)}));
    auto r = l.lane->expect<wire::SessionJoined>(15);
    if (!r || !r->ok) return std::nullopt;
    return l;
  };
  // A write of `bytes` of s's buffer whose data comes as transfer `id`.
  auto announce = [](Laned& l, uint64_t id, uint64_t bytes) {
    wire::ClRequest q{0, wire::ClWrite{{l.setup.queue, {}, 0}, l.setup.buffer, cl_linear(0, bytes)}, 0};
    q.lane_transfer = id;
    q.lane_bytes = bytes;
    l.main->send(wire::encode(q));
  };
  // Sent, and the lane's worker driven until the send has left: the waits below drive only the
  // session's own connection (under load dozens of chunks stayed in the lane's queue).
  auto chunk = [](Laned& l, const wire::ClChunk& c, const void* data, uint64_t bytes) {
    bool left = false;
    const transport::Segment piece{data, bytes};
    l.lane->worker->send(l.lane->id, wire::encode(c), {&piece, 1}, [&left](bool) { left = true; });
    const uint64_t end = now_ns() + 10'000'000'000ull;
    while (!left && now_ns() < end) l.lane->worker->progress();
  };
  std::vector<uint8_t> data(4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(255 - i % 251);
  const uint64_t k = wire::kMinChunkBytes;

  // A write whose data comes right lands (the control): then chunks of that complete transfer.
  auto good = laned();
  if (!good) return std::printf("FAIL %s: no OpenCL session with a lane\n", what), 1;
  announce(*good, 1, data.size());
  chunk(*good, {1, data.size(), k, 0}, data.data(), data.size());
  auto back = cl_read(*good->main, 2, good->setup.queue, good->setup.buffer, cl_linear(0, data.size()));
  if (!back || back->first != 0 || back->second != data)
    return std::printf("FAIL %s: a write over the lane did not land\n", what), 1;
  chunk(*good, {1, data.size(), k, 0}, data.data(), data.size());
  if (good->main->expect_rejection("cl-lane-chunks (a chunk of a transfer already complete)")) return 1;

  struct Case {
    const char* name;
    std::function<void(Laned&)> send;
  };
  std::vector<uint8_t> big(2 * k, 7);
  const Case cases[] = {
      {"a chunk sent twice", [&](Laned& l) {
         chunk(l, {1, 2 * k, k, 0}, big.data(), k);
         chunk(l, {1, 2 * k, k, 0}, big.data(), k);
       }},
      {"chunks of one transfer in two sizes", [&](Laned& l) {
         chunk(l, {1, 3 * k, k, 0}, big.data(), k);
         chunk(l, {1, 3 * k, 2 * k, 1}, big.data(), k);
       }},
      {"a chunk's data of another length than it says", [&](Laned& l) { chunk(l, {1, 2 * k, k, 1}, big.data(), k / 2); }},
      {"a transfer id that does not increase", [&](Laned& l) {
         announce(l, 5, 16);
         announce(l, 5, 16);
       }},
      {"more transfers open than a session may hold", [&](Laned& l) {
         for (uint64_t id = 1; id <= 65; ++id) chunk(l, {id, 100, k, 0}, big.data(), 100);  // small: within the bytes
       }},
      {"a transfer beyond max_request_bytes", [&](Laned& l) { chunk(l, {1, uint64_t(1) << 40, k, 0}, big.data(), k); }},
      {"a chunk index beyond its transfer", [&](Laned& l) { chunk(l, {1, 2 * k, k, 2}, big.data(), k); }},
  };
  for (const Case& c : cases) {
    auto l = laned();
    if (!l) return std::printf("FAIL %s: no OpenCL session with a lane for '%s'\n", what, c.name), 1;
    c.send(*l);
    std::printf("case: %s\n", c.name);
    if (l->main->expect_rejection(c.name)) return 1;
  }

  // A write announced whose data never comes, then the client leaves: its session ends.
  Peer watcher(host, port);
  if (!watcher.authenticate(secret)) return std::printf("FAIL %s: no watching session\n", what), 1;
  {
    auto l = laned();
    if (!l) return std::printf("FAIL %s: no session for the abandoned write\n", what), 1;
    announce(*l, 1, 2 * k);
    chunk(*l, {1, 2 * k, k, 0}, big.data(), k);
    cl_read(*l->main, 3, l->setup.queue, l->setup.buffer, cl_linear(0, 16));  // waits behind it: unanswered
  }  // both connections closed here
  std::string left;
  const uint64_t end = now_ns() + 20'000'000'000ull;
  for (uint64_t call = 10; now_ns() < end; ++call) {
    watcher.send(wire::encode(wire::StatusRequest{call}));
    auto st = watcher.expect<wire::StatusReply>(10);
    if (!st) return std::printf("FAIL %s: no status\n", what), 1;
    const auto cl = nlohmann::json::parse(st->json)["opencl"];
    left = cl.dump();
    if (cl["sessions"] == 0 && cl["sessions_ending"] == 0 && cl["lane_open"]["transfers"] == 0) {
      std::printf("ok %s: the control write landed; %zu kinds of bad chunks each ended their session only; an "
                  "abandoned write's session ended with its client\n", what, std::size(cases) + 1);
      return 0;
    }
    usleep(100'000);
  }
  return std::printf("FAIL %s: the abandoned write's session did not end: %s\n", what, left.c_str()), 1;
}

int cl_mode(Peer& p, const std::string& mode, const std::string& host, uint16_t port, const Secret& secret) {
  const char* what = mode.c_str();
  const wire::ClId base = wire::kFirstClientId + 100;
  if (mode == "cl-malformed") {  // an operation code nobody defined: the session is rejected
    auto h = wire::encode(wire::ClRequest{0, wire::ClFlush{base}, 0});
    h[8 + 8 + 8] = std::byte{0xfe};
    p.send(h);
    return p.expect_rejection(what);
  }
  auto s = cl_setup(p, base);
  if (!s) return std::printf("FAIL %s: no OpenCL session could be set up\n", what), 1;
  if (mode == "cl-other-session") {  // another session names this one's ids: refused, nothing touched
    Peer other(host, port);
    if (!other.authenticate(secret)) return std::printf("FAIL %s: second session\n", what), 1;
    auto theirs = cl_setup(other, base + 1000);
    if (!theirs) return std::printf("FAIL %s: second session's objects\n", what), 1;
    if (cl_expect_status(what, "read through another session's queue",
                         cl_read(other, 5, s->queue, theirs->buffer, cl_linear(0, 16)), kClInvalidCommandQueue) ||
        cl_expect_status(what, "read of another session's buffer",
                         cl_read(other, 6, theirs->queue, s->buffer, cl_linear(0, 16)), kClInvalidMemObject))
      return 1;
    // The direct path checks ids the same way (before it looks for lanes: the other has none).
    std::vector<uint8_t> junk(16, 0xee);
    transport::Registration reg = other.worker->register_memory(junk.data(), junk.size());
    const uint64_t at = reinterpret_cast<uint64_t>(junk.data());
    auto direct = [&](uint64_t call, wire::ClId queue, wire::ClId mem) -> std::optional<std::pair<int32_t, std::vector<uint8_t>>> {
      other.send(wire::encode(wire::ClRequest{call, wire::ClDirectWrite{{queue, {}, 0}, mem, 0, 16, reg.key(), at}, 0}));
      auto r = other.expect<wire::ClReply>(10);
      if (!r || r->call_id != call) return std::nullopt;
      return std::pair{r->status, std::vector<uint8_t>{}};
    };
    if (cl_expect_status(what, "direct write through another session's queue", direct(7, s->queue, theirs->buffer),
                         kClInvalidCommandQueue) ||
        cl_expect_status(what, "direct write to another session's buffer", direct(8, theirs->queue, s->buffer),
                         kClInvalidMemObject))
      return 1;
    other.send(wire::encode(wire::ClRequest{0, wire::ClWrite{{theirs->queue, {}, 0}, s->buffer, cl_linear(0, 16)}, 16}),
               {{junk.data(), junk.size()}});
    auto notice = other.expect<wire::ClNotice>(10);
    if (!notice || notice->status != kClInvalidMemObject)
      return std::printf("FAIL %s: a write to another session's buffer was not reported as failed\n", what), 1;
    std::printf("server said: %s\n", notice->message.c_str());
    if (cl_expect_intact(p, what, *s) || cl_expect_intact(other, what, *theirs)) return 1;
    std::printf("ok %s: another session's ids name nothing; both sessions' data intact\n", what);
    return 0;
  }
  if (mode == "cl-out-of-bounds") {  // regions beyond the buffer, overflowing pitches, short data
    wire::ClRegion huge;
    huge.origin = {0, 1, 0};
    huge.region = {16, 2, 1};
    huge.row_pitch = UINT64_MAX / 2;
    wire::ClRegion empty = cl_linear(0, 0);
    if (cl_expect_status(what, "read past the end", cl_read(p, 2, s->queue, s->buffer, cl_linear(4000, 200)), kClInvalidValue) ||
        cl_expect_status(what, "offset that wraps", cl_read(p, 3, s->queue, s->buffer, cl_linear(UINT64_MAX - 8, 16)), kClInvalidValue) ||
        cl_expect_status(what, "pitch that overflows", cl_read(p, 4, s->queue, s->buffer, huge), kClInvalidValue) ||
        cl_expect_status(what, "empty region", cl_read(p, 5, s->queue, s->buffer, empty), kClInvalidValue))
      return 1;
    std::vector<uint8_t> junk(64, 0xee);  // announced as the region's data, but a byte short
    p.send(wire::encode(wire::ClRequest{7, wire::ClWrite{{s->queue, {}, 0}, s->buffer, cl_linear(0, 64)}, 63}),
           {{junk.data(), 63}});
    auto w = p.expect<wire::ClReply>(10);
    if (!w || w->status != kClInvalidValue) return std::printf("FAIL %s: a short write was not refused\n", what), 1;
    // A wait list naming a buffer, and a new object with a server-range id.
    p.send(wire::encode(wire::ClRequest{8, wire::ClRead{{s->queue, {s->buffer}, 0}, s->buffer, cl_linear(0, 16)}, 0}));
    auto wl = p.expect<wire::ClReply>(10);
    if (!wl || wl->status != kClInvalidEventWaitList) return std::printf("FAIL %s: a wait list of a buffer was not refused\n", what), 1;
    p.send(wire::encode(wire::ClRequest{0, wire::ClCreateBuffer{5, s->context, 1, 64}, 0}));
    auto low = p.expect<wire::ClNotice>(10);
    if (!low || low->status != kClInvalidValue) return std::printf("FAIL %s: an object id below 2^32 was accepted\n", what), 1;
    if (cl_expect_intact(p, what, *s)) return 1;
    std::printf("ok %s: every bad region, size, wait list and id refused; the buffer intact\n", what);
    return 0;
  }
  if (mode == "cl-direct") {  // large transfers through the copy lanes (ClDirectRead, ClDirectWrite)
    std::vector<uint8_t> mine(8192, 0);
    transport::Registration reg = p.worker->register_memory(mine.data(), mine.size());
    const uint64_t at = reinterpret_cast<uint64_t>(mine.data());
    auto send_direct = [&](uint64_t call, bool write, uint64_t offset, uint64_t size, std::vector<std::byte> key,
                           uint64_t address, wire::ClIds wait = {}) {
      wire::ClOp op = write ? wire::ClOp(wire::ClDirectWrite{{s->queue, wait, 0}, s->buffer, offset, size, key, address})
                            : wire::ClOp(wire::ClDirectRead{{s->queue, wait, 0}, s->buffer, offset, size, key, address});
      p.send(wire::encode(wire::ClRequest{call, op, 0}));
    };
    auto direct = [&](uint64_t call, bool write, uint64_t offset, uint64_t size, std::vector<std::byte> key,
                      uint64_t address, wire::ClIds wait = {}) -> std::optional<std::pair<int32_t, std::vector<uint8_t>>> {
      send_direct(call, write, offset, size, std::move(key), address, std::move(wait));
      auto r = p.expect<wire::ClReply>(10);
      if (!r || r->call_id != call) return std::nullopt;
      return std::pair{r->status, std::vector<uint8_t>{}};
    };
    // Before any LanesRequest: nothing to copy with.
    if (cl_expect_status(what, "direct read without lanes", direct(2, false, 0, 4096, reg.key(), at), -59))
      return 1;  // CL_INVALID_OPERATION
    p.send(wire::encode(wire::LanesRequest{3, p.worker->address(), static_cast<uint32_t>(getpid()),
                                           reinterpret_cast<uint64_t>(p.server_nonce.data())}));
    auto lanes = p.expect<wire::LanesReply>(10);
    if (!lanes || lanes->lanes == 0) return std::printf("FAIL %s: no lanes\n", what), 1;
    std::vector<std::byte> big_key(wire::kMaxClKeyBytes + 1, std::byte{1});
    if (cl_expect_status(what, "direct read past the end", direct(4, false, 4000, 200, reg.key(), at), kClInvalidValue) ||
        cl_expect_status(what, "direct read of nothing", direct(5, false, 0, 0, reg.key(), at), kClInvalidValue) ||
        cl_expect_status(what, "client memory that wraps", direct(6, false, 0, 4096, reg.key(), UINT64_MAX - 100),
                         kClInvalidValue) ||
        cl_expect_status(what, "client memory at 0", direct(7, true, 0, 4096, reg.key(), 0), kClInvalidValue) ||
        cl_expect_status(what, "no memory key", direct(8, false, 0, 4096, {}, at), kClInvalidValue) ||
        cl_expect_status(what, "an over-long memory key", direct(9, true, 0, 4096, big_key, at), kClInvalidValue) ||
        cl_expect_status(what, "direct read into unmapped memory", direct(10, false, 0, 4096, reg.key(), 0x1000),
                         -5) ||  // CL_OUT_OF_RESOURCES: the lanes' copies failed
        cl_expect_status(what, "direct write at an offset that wraps",
                         direct(15, true, UINT64_MAX - 8, 16, reg.key(), at), kClInvalidValue) ||
        cl_expect_status(what, "direct read of a size that wraps", direct(16, false, 16, UINT64_MAX - 8, reg.key(), at),
                         kClInvalidValue) ||
        cl_expect_status(what, "direct write waiting for a buffer", direct(17, true, 0, 16, reg.key(), at, {s->buffer}),
                         kClInvalidEventWaitList))
      return 1;
    // An unanswered one: nobody would learn when the data landed.
    p.send(wire::encode(wire::ClRequest{0, wire::ClDirectRead{{s->queue, {}, 0}, s->buffer, 0, 16, reg.key(), at}, 0}));
    auto quiet = p.expect<wire::ClNotice>(10);
    if (!quiet || quiet->status != kClInvalidValue)
      return std::printf("FAIL %s: an unanswered direct read was not refused (%s: %d %s)\n", what,
                         quiet ? "notice" : "nothing", quiet ? quiet->status : 0, quiet ? quiet->message.c_str() : ""),
             1;
    if (cl_expect_intact(p, what, *s)) return 1;
    // A flood of writes from unmapped memory, queued at once: each fails (its pieces are not
    // written), the server's staging stays within its budget, and the buffer is untouched.
    for (uint64_t i = 0; i < 256; ++i) send_direct(1000 + i, true, 0, 4096, reg.key(), 0x1000);
    for (uint64_t i = 0; i < 256; ++i) {
      auto r = p.expect<wire::ClReply>(30);
      if (!r || r->status != -5)
        return std::printf("FAIL %s: a flooded write from unmapped memory: %s %d\n", what, r ? "status" : "no answer",
                           r ? r->status : 0), 1;
    }
    if (cl_expect_status(what, "direct write from unmapped memory", direct(11, true, 0, 4096, reg.key(), 0x1000), -5) ||
        cl_expect_intact(p, what, *s))
      return 1;
    // Good ones: new bytes go to the buffer from `mine`, then come back into its second half.
    for (size_t i = 0; i < 4096; ++i) mine[i] = static_cast<uint8_t>(255 - i % 251);
    auto w = direct(12, true, 0, 4096, reg.key(), at);
    auto back = cl_read(p, 13, s->queue, s->buffer, cl_linear(0, 4096));
    if (!w || w->first != 0 || !back || back->first != 0 || std::memcmp(back->second.data(), mine.data(), 4096) != 0)
      return std::printf("FAIL %s: a direct write did not arrive\n", what), 1;
    auto r = direct(14, false, 0, 4096, reg.key(), at + 4096);
    if (!r || r->first != 0 || std::memcmp(mine.data() + 4096, mine.data(), 4096) != 0)
      return std::printf("FAIL %s: a direct read did not land\n", what), 1;
    std::printf("ok %s: every bad region, address and key refused, failed copies reported; good ones served\n", what);
    return 0;
  }
  if (mode == "cl-spec-constant") {  // a program from source: refused before PoCL sees it (it aborts)
    const std::string source = "kernel void f(global int* a) { a[0] = 1; }";
    p.send(wire::encode(wire::ClRequest{0, wire::ClCreateProgramSource{base + 20, s->context}, source.size()}),
           {{source.data(), source.size()}});
    for (bool given : {true, false}) {
      p.send(wire::encode(wire::ClRequest{30, wire::ClSetSpecConstant{base + 20, 0, 4, given, wire::ClBlob(given ? 4 : 0)}, 0}));
      auto r = p.expect<wire::ClReply>(10);
      if (!r || r->call_id != 30 || r->status != kClInvalidProgram)
        return std::printf("FAIL %s: expected CL_INVALID_PROGRAM, got %d\n", what, r ? r->status : 0), 1;
    }
    p.send(wire::encode(wire::ClRequest{31, wire::ClSetSpecConstant{base + 99, 0, 4, true, wire::ClBlob(3)}, 0}));
    auto r = p.expect<wire::ClReply>(10);
    if (!r || r->status != kClInvalidProgram)
      return std::printf("FAIL %s: an unknown program: expected CL_INVALID_PROGRAM, got %d\n", what, r ? r->status : 0), 1;
    if (cl_expect_intact(p, what, *s)) return 1;
    std::printf("server said: a source program's constant -> %d\nok %s: refused, the session intact\n", kClInvalidProgram, what);
    return 0;
  }
  if (mode == "cl-limits") {  // the server's opencl_max_memory_bytes is 1 MiB (bad_requests.sh)
    p.send(wire::encode(wire::ClRequest{0, wire::ClCreateBuffer{base + 10, s->context, 1, 2 << 20}, 0}));
    auto over = p.expect<wire::ClNotice>(10);
    if (!over || over->status != -4)  // CL_MEM_OBJECT_ALLOCATION_FAILURE
      return std::printf("FAIL %s: a buffer over the session's memory limit was not refused\n", what), 1;
    std::printf("server said: %s\n", over->message.c_str());
    // A sub-buffer is a view: it takes none of the limit, and releasing it gives none back.
    p.send(wire::encode(wire::ClRequest{0, wire::ClCreateSubBuffer{base + 11, s->buffer, 1, 0, 1024}, 0}));
    p.send(wire::encode(wire::ClRequest{0, wire::ClRelease{base + 11}, 0}));
    p.send(wire::encode(wire::ClRequest{0, wire::ClCreateBuffer{base + 12, s->context, 1, (1 << 20) - 4096}, 0}));
    auto r = cl_read(p, 3, s->queue, base + 12, cl_linear(0, 16));
    if (!r || r->first != 0) return std::printf("FAIL %s: a buffer within the limit was refused\n", what), 1;
    // Exactly full now: even 2048 more bytes are over (an accounting that gave the view's bytes
    // back would let them in).
    p.send(wire::encode(wire::ClRequest{0, wire::ClCreateBuffer{base + 13, s->context, 1, 2048}, 0}));
    auto full = p.expect<wire::ClNotice>(10);
    if (!full || full->status != -4) return std::printf("FAIL %s: the limit was not kept\n", what), 1;
    if (cl_expect_intact(p, what, *s)) return 1;
    std::printf("ok %s: the session's memory limit is kept exactly, sub-buffers take none of it\n", what);
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", what);
  return 2;
}

}  // namespace

// Encrypted sessions: messages sealed by hand (never Worker::protect), then spoiled. Each fault on
// a session of its own, which the server must end (the reason is in its log: session.seal_failed),
// and the server must go on serving.
int sealed_faults(const std::string& host, uint16_t port, const Secret& secret) {
  struct Sealed {
    std::vector<std::byte> header, payload;
  };
  auto seal = [](transport::Seal& s, const wire::Message& m, const std::vector<std::byte>& payload) {
    Sealed out;
    const uint64_t counter = s.seal_header(wire::encode(m), payload.size(), out.header);
    out.payload.resize(payload.empty() ? 0 : transport::sealed_payload_bytes(payload.size()));
    transport::Segment seg{payload.data(), payload.size()};
    if (!payload.empty()) s.seal_payload(counter, {&seg, 1}, payload.size(), out.payload.data());
    return out;
  };
  std::vector<std::byte> data(4096, std::byte{7});
  const wire::Message ping = wire::Ping{1, data.size(), wire::Ping::no_reply};
  int failures = 0;
  for (std::string fault : {"plaintext", "replayed", "reordered", "tampered-header", "tampered-payload", "truncated"}) {
    Peer q(host, port);
    if (!q.authenticate(secret, true)) return std::printf("FAIL %s: could not authenticate\n", fault.c_str()), 1;
    transport::Seal s(q.keys);
    auto send = [&](const Sealed& m) {
      std::vector<transport::Segment> segs;
      if (!m.payload.empty()) segs.push_back({m.payload.data(), m.payload.size()});
      q.send(m.header, segs);
    };
    Sealed good = seal(s, ping, data);
    send(good);  // a good one first: the session is encrypted and working
    if (fault == "plaintext") {
      q.send(wire::encode(ping), {{data.data(), data.size()}});
    } else if (fault == "replayed") {
      send(good);
    } else if (fault == "reordered") {
      Sealed m1 = seal(s, ping, data), m2 = seal(s, ping, data);
      send(m2), send(m1);
    } else if (fault == "tampered-header") {
      Sealed m = seal(s, ping, data);
      m.header[transport::kSealPrefix + 2] ^= std::byte{1};
      send(m);
    } else if (fault == "tampered-payload") {
      Sealed m = seal(s, ping, data);
      m.payload[100] ^= std::byte{1};
      send(m);
    } else {  // truncated: the payload's last tag cut short
      Sealed m = seal(s, ping, data);
      m.payload.resize(m.payload.size() - 10);
      send(m);
    }
    uint64_t end = now_ns() + 10'000'000'000ull;
    while (!q.disconnected && now_ns() < end) q.worker->progress();
    if (!q.disconnected) {
      std::printf("FAIL sealed-faults %s: the server kept the session\n", fault.c_str());
      ++failures;
    } else {
      std::printf("ok sealed-faults %s: disconnected\n", fault.c_str());
    }
  }
  return failures ? 1 : 0;
}

// Lanes (wire::JoinSession): only the session's own client adds them, each number once, within the
// server's offer, and a lane carries chunks and pings only. Other sessions are untouched. Joins go
// to a lane thread's port where the server has them (AuthResult.lane_ports), which takes no
// session's Hello. `p` is authenticated.
int lanes_mode(Peer& p, const std::string& host, uint16_t port, const Secret& secret) {
  Peer other(host, port);
  if (!other.authenticate(secret)) return std::printf("FAIL lanes-hostile: second session not authenticated\n"), 1;
  const uint16_t lane_port = p.lane_ports.empty() ? port : p.lane_ports[0];
  if (!p.lane_ports.empty()) {
    Peer h(host, lane_port);
    h.send(wire::encode(wire::Hello{random_nonce(), "bad_client", "", false}));
    if (h.expect_rejection("lanes-hostile (a Hello on a lane thread's port)")) return 1;
  }
  // Answered SessionJoined{ok}; refused: SessionJoined{!ok} naming `about`, then hung up on.
  auto join = [&](const Nonce& session, uint32_t lane, const Mac& proof, const char* about) -> std::unique_ptr<Peer> {
    auto l = std::make_unique<Peer>(host, lane_port);
    l->send(wire::encode(wire::JoinSession{session, lane, proof}));
    auto r = l->expect<wire::SessionJoined>(15);
    if (!about) {
      if (r && r->ok) return l;
      std::printf("FAIL lanes-hostile: lane %u not joined: %s\n", lane, r ? r->message.c_str() : "no answer");
      return nullptr;
    }
    if (!r || r->ok || r->message.find(about) == std::string::npos) {
      std::printf("FAIL lanes-hostile: lane %u: expected a refusal about '%s', got %s\n", lane, about,
                  r ? r->message.c_str() : "no answer");
      return nullptr;
    }
    std::printf("server said: %s\n", r->message.c_str());
    const uint64_t end = now_ns() + 10'000'000'000ull;
    while (!l->disconnected && now_ns() < end) l->worker->progress();
    if (!l->disconnected) {
      std::printf("FAIL lanes-hostile: a refused lane was kept open\n");
      return nullptr;
    }
    return l;
  };
  const Mac proof1 = wire::lane_proof(secret, p.server_nonce, p.client_nonce, 1);
  Mac wrong = proof1;
  wrong[5] ^= 1;
  if (!join(p.server_nonce, 1, wrong, "proof")) return 1;
  if (!join(random_nonce(), 1, proof1, "no such session")) return 1;
  // Another session's proof for this session's nonce: refused.
  if (!join(p.server_nonce, 2, wire::lane_proof(secret, other.server_nonce, other.client_nonce, 2), "proof")) return 1;
  auto lane = join(p.server_nonce, 1, proof1, nullptr);
  if (!lane) return 1;
  if (!join(p.server_nonce, 1, proof1, "joined already")) return 1;  // a join seen on the wire, replayed
  if (!join(p.server_nonce, 63, wire::lane_proof(secret, p.server_nonce, p.client_nonce, 63), "beyond")) return 1;
  // A ping on the lane is answered there.
  lane->send(wire::encode(wire::Ping{5, 0, 0}));
  if (auto pong = lane->expect<wire::Pong>(10); !pong || pong->call_id != 5)
    return std::printf("FAIL lanes-hostile: a ping on the lane was not answered there\n"), 1;
  // What only the session's own connection may send: the session ends, lane and all.
  lane->send(wire::encode(wire::StatusRequest{6}));
  if (p.expect_rejection("lanes-hostile (a status request on a lane)")) return 1;
  const uint64_t end = now_ns() + 10'000'000'000ull;
  while (!lane->disconnected && now_ns() < end) lane->worker->progress();
  if (!lane->disconnected) return std::printf("FAIL lanes-hostile: the lane outlived its session\n"), 1;
  // The other session is served on.
  other.send(wire::encode(wire::Ping{9, 0, 0}));
  if (auto pong = other.expect<wire::Pong>(10); !pong || pong->call_id != 9)
    return std::printf("FAIL lanes-hostile: the other session is no longer served\n"), 1;
  std::printf("ok lanes-hostile: wrong proofs, no session, replays and lanes beyond the offer refused; a lane's "
              "stray request ended its session and lane only\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: bad_client HOST PORT SECRET_FILE MODE [SECONDS]\n");
    return 2;
  }
  std::string host = argv[1], mode = argv[4];
  uint16_t port = static_cast<uint16_t>(std::atoi(argv[2]));
  Secret secret = read_secret(argv[3]);
  Peer p(host, port);

  if (mode == "wrong-secret") {
    Secret other = secret;
    other[0] ^= 1;
    wire::Hello hello{random_nonce(), "bad_client"};
    p.send(wire::encode(hello));
    auto ch = p.expect<wire::Challenge>(5);
    if (!ch) return std::printf("FAIL: no challenge\n"), 1;
    if (macs_equal(ch->server_proof, wire::server_proof(other, hello.client_nonce, ch->server_nonce)))
      return std::printf("FAIL: server proof verified with the wrong secret\n"), 1;
    p.send(wire::encode(wire::Auth{wire::client_proof(other, ch->server_nonce, hello.client_nonce)}));
    auto r = p.expect<wire::AuthResult>(5);
    if (!r || r->accepted) return std::printf("FAIL: wrong secret was not refused\n"), 1;
    std::printf("ok wrong-secret: %s\n", r->message.c_str());
    return 0;
  }
  if (mode == "unauthenticated") {  // a call before any handshake
    p.send(wire::encode(dgemm_call(2)));
    return p.expect_rejection("unauthenticated");
  }
  if (mode == "early-call") {  // a call after hello, before proving the secret
    p.send(wire::encode(wire::Hello{random_nonce(), "bad_client"}));
    if (!p.expect<wire::Challenge>(5)) return std::printf("FAIL: no challenge\n"), 1;
    std::vector<double> data(8, 1.0);
    p.send(wire::encode(dgemm_call(2)), {{data.data(), 64}});
    return p.expect_rejection("early-call");
  }
  if (mode == "stuck") {  // says hello and then nothing; must not hold up anyone else
    p.send(wire::encode(wire::Hello{random_nonce(), "bad_client-stuck"}));
    double seconds = argc > 5 ? std::atof(argv[5]) : 5;
    uint64_t end = now_ns() + static_cast<uint64_t>(seconds * 1e9);
    while (now_ns() < end && !p.disconnected) p.worker->progress();
    std::printf("stuck client: %s\n", p.disconnected ? ("closed by server: " + p.reason).c_str() : "still connected");
    return 0;
  }
  if (mode == "deaf") {  // asks for echoes it never reads, then dies: the server's sends to it stay queued
    if (!p.authenticate(secret)) return std::printf("FAIL deaf: not authenticated\n"), 1;
    // In bursts the server's queue takes whole; with no progress here nothing of the echoes is
    // read, so this process's queue fills and the server's further sends wait for room.
    std::vector<std::byte> data(2048);
    uint64_t id = 0;
    for (int burst = 0; burst < 8; ++burst) {
      for (int k = 0; k < 32; ++k) p.send(wire::encode(wire::Ping{++id, data.size(), wire::Ping::echo}), {{data.data(), data.size()}});
      usleep(50'000);
    }
    std::printf("deaf client: gone with %llu echoes unread\n", static_cast<unsigned long long>(id));
    std::fflush(stdout);
    _exit(0);  // no goodbye: as a killed client
  }
  if (mode == "quiet-unauthenticated") {  // a streaming ping before any handshake
    std::vector<std::byte> data(4096);
    p.send(wire::encode(wire::Ping{0, data.size(), wire::Ping::no_reply}), {{data.data(), data.size()}});
    return p.expect_rejection("quiet-unauthenticated");
  }
  if (mode == "sink-unauthenticated") {  // asks for a sink before any handshake
    p.send(wire::encode(wire::SinkRequest{1}));
    return p.expect_rejection("sink-unauthenticated");
  }
  if (mode == "sealed-faults") return sealed_faults(host, port, secret);
  if (!p.authenticate(secret)) return std::printf("FAIL: could not authenticate\n"), 1;
  if (mode == "quiet-mismatch") {  // announces more than it sends, after good ones (eager and rendezvous)
    std::vector<std::byte> data(256 << 10);
    for (size_t n : {size_t(4096), data.size()})
      p.send(wire::encode(wire::Ping{0, n, wire::Ping::no_reply}), {{data.data(), n}});
    p.send(wire::encode(wire::Ping{0, 8192, wire::Ping::no_reply}), {{data.data(), 4096}});
    return p.expect_rejection("quiet-mismatch");
  }
  if (mode == "quiet-oversized") {  // consistent, but above the server's max_request_bytes
    std::vector<std::byte> data(4 << 20);
    p.send(wire::encode(wire::Ping{0, data.size(), wire::Ping::no_reply}), {{data.data(), data.size()}});
    return p.expect_rejection("quiet-oversized");
  }
  if (mode == "quiet-flags") {  // no_reply with echo: not a valid combination
    std::vector<std::byte> data(4096);
    auto h = wire::encode(wire::Ping{0, data.size(), wire::Ping::no_reply});
    h.back() = std::byte{wire::Ping::no_reply | wire::Ping::echo};
    p.send(h, {{data.data(), data.size()}});
    return p.expect_rejection("quiet-flags");
  }
  if (mode == "quiet-counted") {  // consumed pings are still counted, and the session goes on
    std::vector<std::byte> data(512 << 10);
    const int n = 200;
    for (int i = 0; i < n; ++i) {
      size_t bytes = i % 2 ? 4096 : data.size();  // eager and rendezvous
      p.send(wire::encode(wire::Ping{0, bytes, wire::Ping::no_reply}), {{data.data(), bytes}});
      if (i % 16 == 15) p.worker->progress();
    }
    return p.expect_counted("quiet-counted", n, (n / 2) * (4096 + data.size()));
  }
  if (mode == "sink-counted") {  // the same through the sink, which is one per session
    const uint32_t sink = p.open_sink(5);
    if (!sink || p.open_sink(6) != sink) return std::printf("FAIL sink-counted: no sink, or a second one\n"), 1;
    std::vector<std::byte> data(512 << 10);
    const int n = 200;
    for (int i = 0; i < n; ++i) {
      p.send_to_sink(sink, data.data(), i % 2 ? 4096 : data.size());
      if (i % 16 == 15) p.worker->progress();
    }
    if (int rc = p.expect_counted("sink-counted", n, (n / 2) * (4096 + data.size()))) return rc;
    while (p.sink_ok + p.sink_failed < n) p.worker->progress();
    if (p.sink_failed) return std::printf("FAIL sink-counted: %d sends failed\n", p.sink_failed), 1;
    return 0;
  }
  if (mode == "sink-oversized") {  // above max_request_bytes: the session ends at the next message
    const uint32_t sink = p.open_sink(5);
    if (!sink) return std::printf("FAIL sink-oversized: no sink\n"), 1;
    std::vector<std::byte> data(4 << 20);
    p.send_to_sink(sink, data.data(), data.size());
    p.send(wire::encode(wire::Ping{7, 0, 0}));
    return p.expect_rejection("sink-oversized");
  }
  if (mode == "sink-unknown") {  // ids no sink has: dropped, and the session goes on
    const uint32_t sink = p.open_sink(5);
    if (!sink) return std::printf("FAIL sink-unknown: no sink\n"), 1;
    std::vector<std::byte> data(512 << 10);
    for (uint32_t other : {sink + 1, transport::Worker::kMaxSinks})
      for (size_t bytes : {size_t(4096), data.size()}) p.send_to_sink(other, data.data(), bytes);
    return p.expect_counted("sink-unknown", 0, 0);
  }
  if (mode == "enveloped-mismatch" || mode == "enveloped-garbage") {  // wire::Enveloped: a long message's envelope
    std::vector<std::byte> inner(wire::kMaxHeaderBytes + 904);
    for (size_t i = 0; i < inner.size(); ++i) inner[i] = std::byte(i * 37 + 11);  // decodes as nothing
    // mismatch: announces 4 bytes of payload after the encoding, sends none
    const uint64_t announced = mode == "enveloped-mismatch" ? 4 : 0;
    p.send(wire::encode(wire::Enveloped{inner.size(), announced}), {{inner.data(), inner.size()}});
    return p.expect_rejection(mode.c_str());
  }
  if (mode == "garbage") {
    std::vector<std::byte> junk(64);
    for (size_t i = 0; i < junk.size(); ++i) junk[i] = std::byte(i * 37 + 11);
    p.send(junk);
    return p.expect_rejection("garbage");
  }
  if (mode == "truncated") {
    auto h = wire::encode(dgemm_call(4));
    h.resize(h.size() - 5);
    p.send(h);
    return p.expect_rejection("truncated");
  }
  if (mode == "lanes-hostile") return lanes_mode(p, host, port, secret);
  if (mode == "fill-faults") {  // bench get's pings: nothing may come with one, nor too much be asked
    std::vector<std::byte> data(64);
    Peer q(host, port);
    if (!q.authenticate(secret)) return std::printf("FAIL %s: second session not authenticated\n", mode.c_str()), 1;
    q.send(wire::encode(wire::Ping{2, 1ull << 40, wire::Ping::fill}));
    if (q.expect_rejection("fill-faults (asks 1 TiB)")) return 1;
    p.send(wire::encode(wire::Ping{1, data.size(), wire::Ping::fill}), {{data.data(), data.size()}});
    return p.expect_rejection("fill-faults (carries a payload)");
  }
  if (mode == "resident-unknown") {  // names resident inputs this session never sent
    // A DGEMM whose A the server does not hold: failed as such, nothing computed.
    auto call = dgemm_call(64);
    const uint64_t each = 64 * 64 * sizeof(double);
    std::vector<double> ones(2 * 64 * 64, 1.0);
    call.resident = {{0, true, {0x1234, 0x5678}}};
    call.payload_bytes = each;
    p.send(wire::encode(call), {{ones.data(), each}});
    auto r = p.expect<wire::CallReply>(10);
    if (!r || r->ok || r->message != wire::kResidentMissing) {
      std::printf("FAIL %s: expected the call to fail as '%s'\n", mode.c_str(), wire::kResidentMissing);
      return 1;
    }
    std::printf("server said: %s\n", r->message.c_str());
    // Sent and kept under that digest, then named: served from what was kept (C = A B = 64).
    call.resident = {{0, false, {0x1234, 0x5678}}};
    call.payload_bytes = 2 * each;
    p.send(wire::encode(call), {{ones.data(), 2 * each}});
    if (auto k = p.expect<wire::CallReply>(10); !k || !k->ok) return std::printf("FAIL %s: the kept call\n", mode.c_str()), 1;
    call.resident = {{0, true, {0x1234, 0x5678}}};
    call.payload_bytes = each;
    p.last_payload = {};
    p.send(wire::encode(call), {{ones.data(), each}});
    auto u = p.expect<wire::CallReply>(10);
    const auto* c = reinterpret_cast<const double*>(p.last_payload.data());
    if (!u || !u->ok || p.last_payload.size() != each || c[0] != 64 || c[64 * 64 - 1] != 64) {
      std::printf("FAIL %s: the call on the kept input was not served right\n", mode.c_str());
      return 1;
    }
    // LAPACK likewise: getrs naming factors never sent.
    auto q = lapack_call(wire::LapackRoutine::getrs, 0, 4, 1);
    q.resident = {{0, true, {1, 2}}};
    q.payload_bytes -= 4 * 4 * sizeof(double);
    std::vector<std::byte> rest(q.payload_bytes);
    p.send(wire::encode(q), {{rest.data(), rest.size()}});
    auto l = p.expect<wire::LapackReply>(10);
    if (!l || l->ok || l->message != wire::kResidentMissing) {
      std::printf("FAIL %s: getrs on unknown factors not failed as missing\n", mode.c_str());
      return 1;
    }
    std::printf("ok %s: unknown inputs failed as missing; a kept one served right\n", mode.c_str());
    return 0;
  }
  if (mode == "mismatch") {  // announces 3 matrices of 4x4 but sends fewer bytes
    std::vector<double> data(10, 1.0);
    p.send(wire::encode(dgemm_call(4)), {{data.data(), data.size() * sizeof(double)}});
    return p.expect_rejection("mismatch");
  }
  if (mode == "oversized") {  // a consistent call larger than the server's max_request_bytes
    auto call = dgemm_call(512);  // 2 x 2 MiB of input
    std::vector<double> data(call.payload_bytes / sizeof(double), 1.0);
    p.send(wire::encode(call), {{data.data(), call.payload_bytes}});
    return p.expect_rejection("oversized");
  }
  if (mode == "huge-output") {  // no input bytes at all (k = 0), but an enormous output matrix
    auto call = dgemm_call(0);
    call.call.m = call.call.n = 100000;
    call.payload_bytes = wire::request_bytes(call.call);
    p.send(wire::encode(call));
    return p.expect_rejection("huge-output");
  }
  // Chunked calls: each chunk is checked against its call and the chunks already seen.
  auto chunk = [](int64_t n, uint64_t index) {
    wire::Level3Call c = dgemm_call(n).call;
    return wire::CallChunk{1, c, wire::request_bytes(c), wire::kMinChunkBytes, index};
  };
  std::vector<std::byte> data(4 << 20);
  if (mode == "chunk-size") {  // a chunk whose payload is not the size its index implies
    p.send(wire::encode(chunk(128, 0)), {{data.data(), 1000}});
    return p.expect_rejection("chunk-size");
  }
  if (mode == "chunk-twice") {  // the same chunk again
    auto c = chunk(128, 1);
    p.send(wire::encode(c), {{data.data(), wire::chunk_length(c)}});
    p.send(wire::encode(c), {{data.data(), wire::chunk_length(c)}});
    return p.expect_rejection("chunk-twice");
  }
  if (mode == "chunk-mismatch") {  // two chunks of one call that describe different calls
    auto a = chunk(128, 0), b = chunk(160, 1);
    p.send(wire::encode(a), {{data.data(), wire::chunk_length(a)}});
    p.send(wire::encode(b), {{data.data(), wire::chunk_length(b)}});
    return p.expect_rejection("chunk-mismatch");
  }
  if (mode == "chunk-oversized") {  // a chunked call above max_request_bytes
    auto c = chunk(1024, 0);  // 16 MiB of input
    p.send(wire::encode(c), {{data.data(), wire::chunk_length(c)}});
    return p.expect_rejection("chunk-oversized");
  }
  // Protocol 15: resident inputs in chunked calls.
  if (mode == "chunk-held") {  // a chunk that lies in an input the call says the server holds
    auto c = chunk(128, 0);    // A (2 chunks), then B (2): A's chunks are the server's to fill
    c.resident = {{0, true, {0x1234, 0x5678}}};
    p.send(wire::encode(c), {{data.data(), wire::chunk_length(c)}});
    return p.expect_rejection("chunk-held");
  }
  if (mode == "chunk-resident-unknown") {  // a chunked call naming an input the server never kept
    for (uint64_t index : {2, 3}) {
      auto c = chunk(128, index);
      c.resident = {{0, true, {0x1234, 0x5678}}};
      p.send(wire::encode(c), {{data.data(), wire::chunk_length(c)}});
    }
    auto r = p.expect<wire::CallReply>(10);
    if (!r || r->ok || r->message != wire::kResidentMissing) {
      std::printf("FAIL %s: expected the call to fail as '%s'\n", mode.c_str(), wire::kResidentMissing);
      return 1;
    }
    std::printf("ok %s: failed as missing once its chunks were in (server said: %s)\n", mode.c_str(), r->message.c_str());
    return 0;
  }
  if (mode.rfind("lapack-", 0) == 0 || mode.rfind("direct-", 0) == 0) return lapack_mode(p, mode);
  if (mode.rfind("fft-", 0) == 0) return fft_mode(p, mode, host, port, secret);
  if (mode == "cl-lane-chunks") return cl_lane_chunks_mode(host, port, secret);
  if (mode.rfind("cl-", 0) == 0) return cl_mode(p, mode, host, port, secret);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
