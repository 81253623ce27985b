// libFuzzer target for the server's sessions: sequences of (possibly malformed) messages from up
// to three peers at once against a real server::Server with the CPU backend, in-process, on a
// transport without a network (fake_transport.hpp). The server is the daemon's own code; only
// worker.cpp is replaced, and the harness drives it with Server::poll() instead of run().
//
// An input is a script (parse() below): peers connect, authenticate properly (the harness knows
// the secret; the hello names the server's identity or one it lacks) or not, send messages, either generated from the wire structs with fuzzed fields
// (every client message type, ids from a small range so that sessions collide) or raw bytes,
// with payloads of the right size or not, batched so that several arrive in one progress (their
// payloads land before the earlier ones are handled, as with UCX), large ones overtaken by later
// ones; and hang up. Findings (a crash, a sanitizer report, or a failed check: __builtin_trap):
//   - what the server sends decodes, is a server-to-client message, and carries exactly the
//     payload it announces;
//   - a connection gets nothing but the handshake's messages before it is authenticated, and
//     nothing at all after an error or a refused authentication;
//   - every answer names a call id that this connection used;
//   - once every peer has gone and the server is idle, nothing is left: no session, no call in
//     progress, no FFT plan;
//   - isolation: each peer's answers are the same when it runs alone (its messages only, in the
//     same batches) as when the others run beside it. Compared: message types, call ids, success,
//     error texts, sizes, LAPACK's INFO, echoed ping data; not the timings, the load, the status
//     document (it lists every client by design) or the results' values (the cost model picks
//     block sizes by measured rates, and blocking may change the rounding).
#include <fuzzer/FuzzedDataProvider.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/openblas_core.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "fake_transport.hpp"
#include "server/server.hpp"
#include "wire/messages.hpp"

extern "C" void openblas_set_num_threads(int);

namespace {

using namespace outboard;
using namespace outboard::wire;
using transport::PeerId;
namespace fake = transport::fake;
using Bytes = std::vector<std::byte>;

constexpr int kSlots = 3;
constexpr size_t kMaxOps = 40;
constexpr uint64_t kMaxRequestBytes = 1 << 20;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_session: check failed: %s\n", what);
  __builtin_trap();
}

// ---- the server, made once per process ----

struct Harness {
  Secret secret{};
  std::unique_ptr<server::Server> server;

  Harness() {
    spdlog::set_level(spdlog::level::off);
    openblas_set_num_threads(1);  // the same results whatever else runs
    char dir[] = "/tmp/outboard-fuzz-session.XXXXXX";
    if (!mkdtemp(dir)) throw Error("mkdtemp failed");
    const std::string token = std::string(dir) + "/token";
    write_new_secret(token, false);
    secret = read_secret(token);
    server::Config c;
    c.token_file = token;
    c.port = 0;
    c.compute_threads = 1;
    c.max_request_bytes = kMaxRequestBytes;
    c.max_client_bytes = 2 * kMaxRequestBytes;
    c.max_clients = 16;
    c.buffer_cache_bytes = 16 << 20;
    c.copy_lanes = 0;  // the direct path needs real memory registration: its messages are refused
    c.fft_threads = 1;
    c.fft_max_plans = 8;
    c.opencl = false;
    c.idle_spin_ns = 0;
    std::vector<std::unique_ptr<server::Backend>> backends;
    backends.push_back(backends::make_cpu_backend({1, "estimate", "", 8}));
    server = std::make_unique<server::Server>(c, std::move(backends));
    server->start();
  }

  // Until the server is idle: every arrival handled, every call finished and answered.
  void settle() {
    while (server->poll() || fake::Network::get().pending()) {
    }
  }
};

// Made once; destroyed when the process exits, before the libraries' statics (spdlog's loggers):
// left running, the server's threads could still be at work then (an FFT plan being made for an
// earlier input logs its failure) and read a logger already freed. libFuzzer's fork mode ends each
// job with exit(), so this happened now and then, with no input to blame (an empty crash file).
Harness* the_harness = nullptr;

Harness& harness() {
  if (!the_harness) {
    the_harness = new Harness;
    std::atexit([] {
      delete the_harness;  // the server's destructor joins its threads
      the_harness = nullptr;
    });
  }
  return *the_harness;
}

// ---- the script ----

struct Op {
  enum class Kind { connect, authenticate, message, sink, hang_up } kind = Kind::message;
  int slot = 0;
  int batch = 0;  // ops of one batch arrive in one progress()
  Bytes header, payload;
  bool rendezvous = false;
  uint64_t sink_bytes = 0;
  std::string identity;  // authenticate: the identity its hello names
};

// Finite values whatever the element type (no byte above 0x3f: no NaN or infinity), so that no
// library is asked to iterate on garbage; the content still varies with the input.
Bytes payload_of(FuzzedDataProvider& f, uint64_t right_size) {
  uint64_t n = right_size;
  if (f.ConsumeIntegralInRange(0, 7) == 0) n = f.ConsumeIntegralInRange<uint64_t>(0, right_size * 2 + 64);
  n = std::min<uint64_t>(n, kMaxRequestBytes + 4096);
  const uint8_t seed = f.ConsumeIntegral<uint8_t>();
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte((seed + i * 7) & 0x3f);
  return b;
}

template <class T>
T pick(FuzzedDataProvider& f, std::initializer_list<T> from) {
  return *(from.begin() + f.ConsumeIntegralInRange<size_t>(0, from.size() - 1));
}

uint64_t small_id(FuzzedDataProvider& f) { return f.ConsumeIntegralInRange<uint64_t>(1, 4); }

// The identity a hello names: the server's one ("" and "default" are the same), or one it does not
// have (whose refusal the server holds back: housekeeping sends it, which the harness never runs).
std::string identity(FuzzedDataProvider& f) { return pick<std::string>(f, {"", "default", "stranger"}); }

Level3Call level3(FuzzedDataProvider& f, int64_t max_dim) {
  Level3Call c;
  c.routine = static_cast<Routine>(f.ConsumeIntegralInRange<int>(0, int(Routine::count_) - 1));
  c.scalar = static_cast<Scalar>(f.ConsumeIntegralInRange<int>(0, int(Scalar::count_) - 1));
  const bool cplx = is_complex(c.scalar);
  switch (c.routine) {
    case Routine::gemm:
      c.transa = pick(f, {'N', 'T', 'C'}), c.transb = pick(f, {'N', 'T', 'C'});
      break;
    case Routine::symm:
    case Routine::hemm:
      c.side = pick(f, {'L', 'R'}), c.uplo = pick(f, {'U', 'L'});
      break;
    case Routine::syrk:
    case Routine::herk:
    case Routine::syr2k:
    case Routine::her2k:
      c.uplo = pick(f, {'U', 'L'}), c.transa = cplx ? pick(f, {'N', 'C', 'T'}) : pick(f, {'N', 'T', 'C'});
      break;
    default:  // trmm, trsm
      c.side = pick(f, {'L', 'R'}), c.uplo = pick(f, {'U', 'L'}), c.transa = pick(f, {'N', 'T', 'C'});
      c.diag = pick(f, {'N', 'U'});
  }
  c.m = f.ConsumeIntegralInRange<int64_t>(0, max_dim);
  c.n = f.ConsumeIntegralInRange<int64_t>(0, max_dim);
  c.k = f.ConsumeIntegralInRange<int64_t>(0, max_dim);
  c.alpha = {1.0, cplx ? 0.5 : 0.0};
  c.beta = {f.ConsumeBool() ? 1.0 : 0.0, 0.0};
  c.output_sent = f.ConsumeBool();
  if (f.ConsumeIntegralInRange(0, 15) != 0) {  // mostly valid: the server's checks come first otherwise
    try {
      validate(c);
    } catch (const ProtocolError&) {
      c.m = c.n = c.k = 4;
      if (c.routine == Routine::syrk || c.routine == Routine::herk || c.routine == Routine::syr2k ||
          c.routine == Routine::her2k)
        c.m = 0;
      if (c.routine == Routine::symm || c.routine == Routine::hemm || c.routine == Routine::trmm ||
          c.routine == Routine::trsm)
        c.k = 0;
    }
  }
  return c;
}

LapackCall lapack(FuzzedDataProvider& f, int64_t max_dim) {
  LapackCall c;
  c.routine = static_cast<LapackRoutine>(f.ConsumeIntegralInRange<int>(0, int(LapackRoutine::count_) - 1));
  c.scalar = static_cast<Scalar>(f.ConsumeIntegralInRange<int>(0, int(Scalar::count_) - 1));
  auto dim = [&] { return f.ConsumeIntegralInRange<int64_t>(0, max_dim); };
  using R = LapackRoutine;
  switch (c.routine) {
    case R::gesv: c.n = dim(), c.nrhs = dim(); break;
    case R::getrf: c.m = dim(), c.n = dim(); break;
    case R::getrs: c.trans = pick(f, {'N', 'T', 'C'}), c.n = dim(), c.nrhs = dim(); break;
    case R::posv: c.uplo = pick(f, {'U', 'L'}), c.n = dim(), c.nrhs = dim(); break;
    case R::potrf: c.uplo = pick(f, {'U', 'L'}), c.n = dim(); break;
    case R::potrs: c.uplo = pick(f, {'U', 'L'}), c.n = dim(), c.nrhs = dim(); break;
    case R::gels: c.trans = pick(f, {'N', 'T', 'C'}), c.m = dim(), c.n = dim(), c.nrhs = dim(); break;
    case R::geqrf: c.m = dim(), c.n = dim(); break;
    case R::syevd: c.jobz = pick(f, {'N', 'V'}), c.uplo = pick(f, {'U', 'L'}), c.n = dim(); break;
    default: c.jobu = pick(f, {'A', 'S', 'O', 'N'}), c.jobvt = pick(f, {'A', 'S', 'O', 'N'}), c.m = dim(), c.n = dim();
  }
  return c;
}

FftShape fft_shape(FuzzedDataProvider& f, bool large) {
  FftShape s;
  s.precision = f.ConsumeBool() ? FftPrecision::f64 : FftPrecision::f32;
  s.kind = static_cast<FftKind>(f.ConsumeIntegralInRange<int>(0, int(FftKind::count_) - 1));
  s.sign = s.kind == FftKind::c2c ? pick<int8_t>(f, {-1, 1})
           : s.kind == FftKind::r2c ? -1
           : s.kind == FftKind::c2r ? 1
                                     : 0;
  const size_t rank = large ? 1 : f.ConsumeIntegralInRange<size_t>(1, 3);
  for (size_t i = 0; i < rank; ++i)
    s.n.push_back(large ? f.ConsumeIntegralInRange<int64_t>(9000, 40000) : f.ConsumeIntegralInRange<int64_t>(1, 12));
  s.batch = f.ConsumeIntegralInRange<int64_t>(1, 3);
  if (s.kind == FftKind::r2r)
    for (size_t i = 0; i < rank; ++i) s.r2r_kinds.push_back(f.ConsumeIntegralInRange<uint8_t>(0, kMaxR2rKind));
  return s;
}

// A message of the fuzzer's choosing, with its payload.
void message(FuzzedDataProvider& f, Bytes& header, Bytes& payload) {
  const std::vector<std::byte> key(16, std::byte{0x11});
  auto encoded = [&](const Message& m, uint64_t payload_bytes) {
    header = encode(m);
    payload = payload_of(f, payload_bytes);
  };
  switch (f.ConsumeIntegralInRange(0, 22)) {
    case 0: {  // raw bytes
      header = f.ConsumeBytes<std::byte>(f.ConsumeIntegralInRange<size_t>(0, 512));
      payload = f.ConsumeBool() ? Bytes{} : payload_of(f, f.ConsumeIntegralInRange<uint64_t>(1, 4096));
      break;
    }
    case 1: {
      Hello h{{}, f.ConsumeRandomLengthString(64), {}};
      h.identity = f.ConsumeBool() ? identity(f) : f.ConsumeRandomLengthString(80);
      encoded(h, 0);
      break;
    }
    case 2: encoded(Auth{}, 0); break;
    case 3: {
      const Level3Call c = level3(f, 24);
      encoded(Blas3Call{small_id(f), c, request_bytes(c)}, request_bytes(c));
      break;
    }
    case 4: encoded(StatusRequest{small_id(f)}, 0); break;
    case 5: {
      Ping p{small_id(f), 0, f.ConsumeIntegral<uint8_t>()};
      const Bytes data = payload_of(f, f.ConsumeIntegralInRange<uint64_t>(0, 4096));
      p.payload_bytes = f.ConsumeIntegralInRange(0, 7) ? data.size() : f.ConsumeIntegralInRange<uint64_t>(0, 8192);
      header = encode(p);
      payload = data;
      break;
    }
    case 6: {
      const LapackCall c = lapack(f, 16);
      encoded(LapackRequest{small_id(f), c, request_bytes(c)}, request_bytes(c));
      break;
    }
    case 7: {  // one chunk of a large Level-3 call (whole chunked calls: chunked_call())
      const Level3Call c = level3(f, 140);
      const uint64_t total = request_bytes(c), chunk = kMinChunkBytes * f.ConsumeIntegralInRange(1, 2);
      CallChunk q{small_id(f), c, total, chunk, f.ConsumeIntegralInRange<uint64_t>(0, 8)};
      encoded(q, q.chunk_index * chunk < total ? chunk_length(q) : 0);
      break;
    }
    case 8: {
      const LapackCall c = lapack(f, 160);
      const uint64_t total = request_bytes(c), chunk = kMinChunkBytes;
      LapackChunk q{small_id(f), c, total, chunk, f.ConsumeIntegralInRange<uint64_t>(0, 8)};
      encoded(q, q.chunk_index * chunk < total ? chunk_length(q) : 0);
      break;
    }
    case 9: encoded(LanesRequest{small_id(f), Bytes(16, std::byte{1}), f.ConsumeIntegral<uint32_t>(), 0x1000}, 0); break;
    case 10: {
      const LapackCall c = lapack(f, 16);
      encoded(DirectLapack{small_id(f), c, {key}, {{0x1000, request_bytes(c), 0}}, {{0x2000, reply_bytes(c), 0}},
                           f.ConsumeBool()},
              0);
      break;
    }
    case 11: encoded(Proceed{small_id(f)}, 0); break;
    case 12: encoded(SinkRequest{small_id(f)}, 0); break;
    case 13: encoded(FftPlan{small_id(f), fft_shape(f, false)}, 0); break;
    case 14: encoded(FftRelease{small_id(f)}, 0); break;
    case 15: {
      const FftShape s = fft_shape(f, false);
      encoded(FftExecute{small_id(f), small_id(f), s, input_bytes(s), {}}, input_bytes(s));
      break;
    }
    case 16: {
      const FftShape s = fft_shape(f, true);
      const uint64_t total = input_bytes(s);
      FftChunk q{small_id(f), small_id(f), s, total, kMinChunkBytes, f.ConsumeIntegralInRange<uint64_t>(0, 8)};
      encoded(q, q.chunk_index * q.chunk_bytes < total ? chunk_length(q) : 0);
      break;
    }
    case 17: {
      const FftShape s = fft_shape(f, false);
      encoded(DirectFft{small_id(f), small_id(f), s, {key}, {{0x1000, input_bytes(s), 0}}, {{0x2000, output_bytes(s), 0}}}, 0);
      break;
    }
    case 18: {
      const Level3Call c = level3(f, 24);
      encoded(DirectBlas3{small_id(f), c, {key}, {{0x1000, request_bytes(c), 0}}, {{0x2000, reply_bytes(c), 0}},
                          f.ConsumeBool()},
              0);
      break;
    }
    case 19: encoded(ClRequest{small_id(f), ClGetPlatforms{}, 0}, 0); break;
    case 20: encoded(ErrorMessage{"bye"}, 0); break;
    case 21: {  // a piece of an OpenCL write's data (this server has no OpenCL: refused, as on one without)
      ClChunk q{small_id(f), kMinChunkBytes * f.ConsumeIntegralInRange<uint64_t>(1, 3), kMinChunkBytes, 0};
      q.chunk_index = f.ConsumeIntegralInRange<uint64_t>(0, chunk_count(q.payload_bytes, q.chunk_bytes) - 1);
      encoded(q, chunk_length(q));
      break;
    }
    default: {  // a server's message, from a client
      CallReply r;
      r.call_id = small_id(f);
      encoded(r, 0);
    }
  }
  // Sometimes one byte of it changed, past the header (the decoder's own fuzzer covers the rest).
  if (header.size() > 8 && f.ConsumeIntegralInRange(0, 15) == 0)
    header[f.ConsumeIntegralInRange<size_t>(8, header.size() - 1)] = std::byte(f.ConsumeIntegral<uint8_t>());
}

// Every chunk of one large call, in an order of the fuzzer's choosing, all in one batch or not.
void chunked_call(FuzzedDataProvider& f, int slot, int& batch, std::vector<Op>& ops) {
  std::vector<Bytes> headers;
  std::vector<uint64_t> sizes;
  const int which = f.ConsumeIntegralInRange(0, 2);
  const uint64_t id = small_id(f);
  if (which == 0) {
    const Level3Call c = level3(f, 140);
    const uint64_t total = request_bytes(c);
    if (total <= kMinChunkBytes) return;
    for (uint64_t i = 0; i < chunk_count(total, kMinChunkBytes); ++i) {
      CallChunk q{id, c, total, kMinChunkBytes, i};
      headers.push_back(encode(q));
      sizes.push_back(chunk_length(q));
    }
  } else if (which == 1) {
    const LapackCall c = lapack(f, 160);
    const uint64_t total = request_bytes(c);
    if (total <= kMinChunkBytes) return;
    for (uint64_t i = 0; i < chunk_count(total, kMinChunkBytes); ++i) {
      LapackChunk q{id, c, total, kMinChunkBytes, i};
      headers.push_back(encode(q));
      sizes.push_back(chunk_length(q));
    }
  } else {
    const FftShape s = fft_shape(f, true);
    const uint64_t total = input_bytes(s);
    const uint64_t plan = small_id(f);
    for (uint64_t i = 0; i < chunk_count(total, kMinChunkBytes); ++i) {
      FftChunk q{id, plan, s, total, kMinChunkBytes, i};
      headers.push_back(encode(q));
      sizes.push_back(chunk_length(q));
    }
  }
  std::vector<size_t> order(headers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[f.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  const bool together = f.ConsumeBool();
  for (size_t i : order) {
    Op op;
    op.slot = slot;
    op.batch = together ? batch : batch++;
    op.header = headers[i];
    op.payload = payload_of(f, sizes[i]);
    op.rendezvous = f.ConsumeBool();
    ops.push_back(std::move(op));
    if (ops.size() >= kMaxOps) break;
  }
  ++batch;
}

std::vector<Op> parse(const uint8_t* data, size_t size) {
  FuzzedDataProvider f(data, size);
  std::vector<Op> ops;
  int batch = 0;
  while (f.remaining_bytes() > 0 && ops.size() < kMaxOps) {
    Op op;
    op.slot = f.ConsumeIntegralInRange(0, kSlots - 1);
    op.batch = batch;
    switch (f.ConsumeIntegralInRange(0, 15)) {
      case 0: op.kind = Op::Kind::connect; break;
      case 1:
      case 2:
        op.kind = Op::Kind::authenticate;
        if (f.ConsumeIntegralInRange(0, 3) == 0) op.identity = identity(f);
        break;
      case 3: op.kind = Op::Kind::hang_up; break;
      case 4: {
        op.kind = Op::Kind::sink;
        op.sink_bytes = f.ConsumeIntegralInRange<uint64_t>(0, 2 * kMaxRequestBytes);
        break;
      }
      case 5: chunked_call(f, op.slot, batch, ops); continue;
      default:
        op.kind = Op::Kind::message;
        message(f, op.header, op.payload);
        op.rendezvous = f.ConsumeBool();
    }
    ops.push_back(std::move(op));
    if (!f.ConsumeBool() || ops.back().kind == Op::Kind::authenticate) ++batch;  // else: with the next op
  }
  return ops;
}

// ---- running a script, and what each peer saw ----

struct Connection {
  int slot = 0;
  Nonce client_nonce{};
  std::optional<Nonce> server_nonce;
  bool authenticated = false, ended = false;  // ended: told an error, or refused
  std::set<uint64_t> call_ids;                // that it sent
};

// Each slot's answers, in order; those of one batch sorted (the order in which the progress
// loop finds finished calls of one batch depends on timing).
using Transcripts = std::map<int, std::vector<std::string>>;

template <class T>
std::optional<uint64_t> call_id_of(const T& m) {
  if constexpr (requires { m.call_id; })
    return m.call_id;
  else
    return std::nullopt;
}

class Run {
 public:
  explicit Run(int only_slot) : only_(only_slot) {}

  Transcripts go(const std::vector<Op>& ops) {
    Harness& h = harness();
    int batch = -1;
    for (const Op& op : ops) {
      if (only_ >= 0 && op.slot != only_) continue;
      if (op.batch != batch) end_batch(), batch = op.batch;
      switch (op.kind) {
        case Op::Kind::connect:
          if (slots_[op.slot]) hang_up(op.slot);
          connect(op.slot);
          break;
        case Op::Kind::authenticate:
          authenticate(op.slot, op.identity);
          break;
        case Op::Kind::hang_up:
          if (slots_[op.slot]) hang_up(op.slot);
          break;
        case Op::Kind::sink:
          if (slots_[op.slot]) fake::Network::get().arrive_in_sink(slots_[op.slot], op.sink_bytes);
          break;
        case Op::Kind::message:
          send(op.slot, op.header, op.payload, op.rendezvous);
          break;
      }
    }
    end_batch();
    for (int s = 0; s < kSlots; ++s)
      if (slots_[s]) hang_up(s);
    end_batch();
    check(!fake::Network::get().pending(), "the transport is idle at the end");
    // Nothing of the ended sessions is left.
    const nlohmann::json st = h.server->status();
    check(st["clients"].empty(), "no session is left once every peer has gone");
    check(st["load"]["calls"] == 0, "no call is left in progress once every peer has gone");
    check(st["fft"]["session_plans"] == 0, "no FFT plan is left once every peer has gone");
    return transcripts_;
  }

 private:
  void connect(int slot) {
    const PeerId p = fake::Network::get().connect("10.0.0." + std::to_string(slot + 1) + ":4000");
    slots_[slot] = p;
    Connection& c = conns_[p];
    c.slot = slot;
    c.client_nonce.fill(uint8_t(slot + 1));
  }
  void hang_up(int slot) {
    fake::Network::get().hang_up(slots_[slot]);
    slots_[slot] = 0;
  }
  void send(int slot, const Bytes& header, const Bytes& payload, bool rendezvous) {
    if (!slots_[slot]) connect(slot);
    Connection& c = conns_[slots_[slot]];
    try {
      const Message m = decode(header);
      std::visit([&](const auto& x) {
        if (auto id = call_id_of(x)) c.call_ids.insert(*id);
      }, m);
      trace(slot, m, header.size(), payload);
    } catch (const ProtocolError&) {
      trace(slot, std::nullopt, header.size(), payload);
    }
    fake::Network::get().arrive(slots_[slot], header, payload, rendezvous);
  }
  // The handshake done right: hello, the server's challenge, the proof only the secret gives.
  void authenticate(int slot, const std::string& identity) {
    if (!slots_[slot]) connect(slot);
    const PeerId p = slots_[slot];
    send(slot, encode(Hello{conns_[p].client_nonce, "fuzz:" + std::to_string(slot), identity}), {}, false);
    end_batch();
    Auth a;
    if (const auto& server_nonce = conns_[p].server_nonce)
      a.client_proof = client_proof(harness().secret, *server_nonce, conns_[p].client_nonce);
    send(slot, encode(a), {}, false);
    end_batch();
  }

  void end_batch() {
    harness().settle();
    std::map<int, std::vector<std::string>> lines;
    for (fake::Sent& s : fake::Network::get().take_sent()) {
      auto it = conns_.find(s.peer);
      check(it != conns_.end(), "a message to a connection this run made");
      Connection& c = it->second;
      lines[c.slot].push_back(observe(c, s));
    }
    for (auto& [slot, l] : lines) {
      // An error ends the session, and a call of the same batch still computing then goes
      // unanswered, one that finished first is answered: which depends on timing, so in a batch
      // that ended in an error only the error is compared.
      if (std::any_of(l.begin(), l.end(), [](const std::string& x) { return x.starts_with("error "); }))
        std::erase_if(l, [](const std::string& x) { return !x.starts_with("error "); });
      std::sort(l.begin(), l.end());
      auto& t = transcripts_[slot];
      t.insert(t.end(), l.begin(), l.end());
    }
  }

  // Checks one message the server sent and says what the comparison between runs looks at.
  std::string observe(Connection& c, const fake::Sent& s) {
    check(!c.ended, "nothing is sent after an error or a refused authentication");
    Message m;
    try {
      m = decode(s.header);
    } catch (const ProtocolError&) {
      check(false, "the server's message decodes");
    }
    const bool handshake = std::holds_alternative<Challenge>(m) || std::holds_alternative<AuthResult>(m) ||
                           std::holds_alternative<ErrorMessage>(m);
    check(handshake || c.authenticated, "only the handshake's messages before authentication");
    std::visit([&](const auto& x) {
      if (auto id = call_id_of(x)) check(c.call_ids.count(*id) != 0, "an answer names a call id its connection used");
    }, m);
    const size_t n = s.payload.size();
    auto no_payload = [&] { check(n == 0, "a message without payload has none"); };
    auto text = [](const auto&... parts) {
      std::string out;
      ((out += parts, out += ' '), ...);
      return out;
    };
    auto num = [](auto v) { return std::to_string(v); };
    if (auto* x = std::get_if<Challenge>(&m)) {
      no_payload();
      c.server_nonce = x->server_nonce;
      return "challenge";
    }
    if (auto* x = std::get_if<AuthResult>(&m)) {
      no_payload();
      c.authenticated = x->accepted;
      c.ended = !x->accepted;
      return text("auth", num(x->accepted), x->message);
    }
    if (auto* x = std::get_if<ErrorMessage>(&m)) {
      no_payload();
      c.ended = true;
      return text("error", x->message);
    }
    if (auto* x = std::get_if<CallReply>(&m)) {
      check(n == x->payload_bytes, "a call's reply carries the payload it announces");
      return text("blas3", num(x->call_id), num(x->ok), x->message, num(x->payload_bytes));
    }
    if (auto* x = std::get_if<LapackReply>(&m)) {
      check(n == x->payload_bytes, "a LAPACK reply carries the payload it announces");
      return text("lapack", num(x->call_id), num(x->ok), x->message, num(x->info), num(x->payload_bytes));
    }
    if (auto* x = std::get_if<FftReply>(&m)) {
      check(n == x->payload_bytes, "an FFT reply carries the payload it announces");
      return text("fft", num(x->call_id), num(x->ok), x->message, num(x->payload_bytes), x->backend);
    }
    if (auto* x = std::get_if<ReplyChunk>(&m)) {
      check(n == x->bytes, "a result piece carries the payload it announces");
      return text("piece", num(x->call_id));  // where the pieces end depends on measured rates
    }
    if (auto* x = std::get_if<Pong>(&m)) {
      check(n == x->payload_bytes, "a pong carries the payload it announces");
      uint64_t sum = 0;
      for (std::byte b : s.payload) sum = sum * 31 + uint8_t(b);
      return text("pong", num(x->call_id), num(x->payload_bytes), num(sum));
    }
    no_payload();
    if (auto* x = std::get_if<StatusReply>(&m)) {
      check(nlohmann::json::accept(x->json), "the status document is JSON");
      return text("status", num(x->call_id));  // lists every session: differs between runs by design
    }
    if (auto* x = std::get_if<LanesReply>(&m)) return text("lanes", num(x->call_id), num(x->lanes), x->message);
    if (auto* x = std::get_if<SinkReply>(&m))  // sink ids are the server's, shared by its sessions
      return text("sink", num(x->call_id), num(x->sink != 0), num(x->max_bytes), x->message);
    if (auto* x = std::get_if<InputTaken>(&m)) return text("input_taken", num(x->call_id));
    check(false, "the server sends only server-to-client messages");
    return "";
  }

  // OUTBOARD_FUZZ_TRACE=1 (reproducing a finding): each message sent, by the index of its type in
  // wire::Message (-1: does not decode), its call id, a LAPACK call's routine and sizes.
  void trace(int slot, const std::optional<Message>& m, size_t header, const Bytes& payload) const {
    static const bool on = getenv("OUTBOARD_FUZZ_TRACE") != nullptr;
    if (!on) return;
    std::string what = m ? "type " + std::to_string(m->index()) : "type -1";
    if (m)
      std::visit([&](const auto& x) {
        if (auto id = call_id_of(x)) what += " call " + std::to_string(*id);
        if constexpr (requires { x.call.nrhs; })
          what += " routine " + std::to_string(int(x.call.routine)) + " scalar " + std::to_string(int(x.call.scalar)) +
                  " m,n,nrhs " + std::to_string(x.call.m) + "," + std::to_string(x.call.n) + "," +
                  std::to_string(x.call.nrhs) + " trans,uplo,jobz,jobu,jobvt " + x.call.trans + x.call.uplo +
                  x.call.jobz + x.call.jobu + x.call.jobvt;
      }, *m);
    std::string start;
    for (size_t i = 0; i < std::min<size_t>(payload.size(), 8); ++i) start += " " + std::to_string(int(payload[i]));
    std::fprintf(stderr, "[run %d] peer %d sends %s, header %zu B, payload %zu B:%s\n", only_, slot, what.c_str(), header,
                 payload.size(), start.c_str());
  }

  int only_;
  PeerId slots_[kSlots] = {};
  std::map<PeerId, Connection> conns_;
  Transcripts transcripts_;
};

void print(const char* what, const std::vector<std::string>& t) {
  std::fprintf(stderr, "%s:\n", what);
  for (const auto& l : t) std::fprintf(stderr, "  %s\n", l.c_str());
}

}  // namespace

// UCX (loaded with the product's libraries, though nothing here uses its network) installs its
// own handlers for SIGILL, SIGSEGV and the like when its library loads, and libFuzzer leaves a
// handler it finds in place: a failed check then ended in UCX's backtrace, with no crash file
// written. Without them (UCX_HANDLE_ERRORS=none, read when the library loads: hence the exec)
// libFuzzer's and the sanitizers' own handlers report and save the input.
// And OpenBLAS's kernels, as the server picks them (backends/cpu/openblas_core.hpp).
extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
  bool again = false;
  if (!getenv("UCX_HANDLE_ERRORS")) setenv("UCX_HANDLE_ERRORS", "none", 1), again = true;
  if (const char* core = backends::better_openblas_core(getenv("OPENBLAS_CORETYPE"), backends::openblas_core(),
                                                        backends::this_cpu()))
    setenv("OPENBLAS_CORETYPE", core, 1), again = true;
  if (again) execv("/proc/self/exe", *argv);  // returns only if it failed: go on as it is
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<Op> ops = parse(data, size);
  std::set<int> slots;
  for (const Op& op : ops) slots.insert(op.slot);
  const Transcripts together = Run(-1).go(ops);
  if (slots.size() < 2) return 0;
  for (int slot : slots) {
    Transcripts alone = Run(slot).go(ops);
    const auto& a = alone[slot];
    const auto& b = together.count(slot) ? together.at(slot) : std::vector<std::string>{};
    if (a != b) {
      std::fprintf(stderr, "fuzz_session: peer %d's answers depend on the other peers\n", slot);
      print("alone", a);
      print("beside the others", b);
      __builtin_trap();
    }
  }
  return 0;
}
