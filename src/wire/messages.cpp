#include "wire/messages.hpp"

#include <iterator>
#include <limits>

#include "wire/codec.hpp"

#include <cstring>

namespace outboard::wire {
namespace {

template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;


void put_call(Writer& w, const Level3Call& c) {
  w.u8(static_cast<uint8_t>(c.routine));
  w.u8(static_cast<uint8_t>(c.scalar));
  for (char ch : {c.side, c.uplo, c.transa, c.transb, c.diag}) w.u8(static_cast<uint8_t>(ch));
  w.i64(c.m);
  w.i64(c.n);
  w.i64(c.k);
  for (double v : c.alpha) w.f64(v);
  for (double v : c.beta) w.f64(v);
  w.u8(c.output_sent ? 1 : 0);
}

Level3Call get_call(Reader& r) {
  Level3Call c;
  c.routine = static_cast<Routine>(r.u8());
  c.scalar = static_cast<Scalar>(r.u8());
  for (char* ch : {&c.side, &c.uplo, &c.transa, &c.transb, &c.diag}) *ch = static_cast<char>(r.u8());
  c.m = r.i64();
  c.n = r.i64();
  c.k = r.i64();
  for (double& v : c.alpha) v = r.f64();
  for (double& v : c.beta) v = r.f64();
  uint8_t sent = r.u8();
  if (sent > 1) throw ProtocolError("invalid boolean in BLAS call");
  c.output_sent = sent == 1;
  validate(c);
  return c;
}

// Where the server's time went, as CallReply and LapackReply both carry it.
template <class Reply>
void put_times(Writer& w, const Reply& r) {
  for (uint64_t v : {r.receive_ns, r.queue_ns, r.to_device_ns, r.compute_ns, r.from_device_ns}) w.u64(v);
  put_load(w, r.load);
}
template <class Reply>
void get_times(Reader& r, Reply& c) {
  for (uint64_t* v : {&c.receive_ns, &c.queue_ns, &c.to_device_ns, &c.compute_ns, &c.from_device_ns}) *v = r.u64();
  c.load = get_load(r);
}


void put_lapack(Writer& w, const LapackCall& c) {
  w.u8(static_cast<uint8_t>(c.routine));
  w.u8(static_cast<uint8_t>(c.scalar));
  for (char ch : {c.trans, c.uplo, c.jobz, c.jobu, c.jobvt, c.jobvl, c.jobvr, c.range, c.diag})
    w.u8(static_cast<uint8_t>(ch));
  for (int64_t v : {c.m, c.n, c.nrhs, c.itype, c.il, c.iu}) w.i64(v);
  for (double v : {c.vl, c.vu, c.abstol, c.rcond}) w.f64(v);
  w.u8(static_cast<uint8_t>(c.side));
  w.i64(c.k);
  for (char ch : {c.balanc, c.sense, c.tranb}) w.u8(static_cast<uint8_t>(ch));
  for (int64_t v : {c.isgn, c.ilo, c.ihi}) w.i64(v);
}

LapackCall get_lapack(Reader& r) {
  LapackCall c;
  c.routine = static_cast<LapackRoutine>(r.u8());
  c.scalar = static_cast<Scalar>(r.u8());
  for (char* ch : {&c.trans, &c.uplo, &c.jobz, &c.jobu, &c.jobvt, &c.jobvl, &c.jobvr, &c.range, &c.diag})
    *ch = static_cast<char>(r.u8());
  for (int64_t* v : {&c.m, &c.n, &c.nrhs, &c.itype, &c.il, &c.iu}) *v = r.i64();
  for (double* v : {&c.vl, &c.vu, &c.abstol, &c.rcond}) *v = r.f64();
  c.side = static_cast<char>(r.u8());
  c.k = r.i64();
  for (char* ch : {&c.balanc, &c.sense, &c.tranb}) *ch = static_cast<char>(r.u8());
  for (int64_t* v : {&c.isgn, &c.ilo, &c.ihi}) *v = r.i64();
  validate(c);
  return c;
}

// A chunk's place in its call (CallChunk, LapackChunk); decoding checks it against the call's payload.
template <class Chunk>
void put_chunking(Writer& w, const Chunk& c) {
  for (uint64_t v : {c.payload_bytes, c.chunk_bytes, c.chunk_index}) w.u64(v);
}
template <class Chunk>
void get_chunking(Reader& r, Chunk& c, uint64_t needed, const char* kind) {
  c.payload_bytes = r.u64();
  c.chunk_bytes = r.u64();
  c.chunk_index = r.u64();
  if (c.payload_bytes != needed || c.payload_bytes == 0)
    throw ProtocolError(std::string("chunked ") + kind + " call announces " + std::to_string(c.payload_bytes) +
                        " payload bytes, its arrays need " + std::to_string(needed));
  if (c.chunk_bytes < kMinChunkBytes) throw ProtocolError("chunk size below the minimum");
  if (c.chunk_index >= chunk_count(c.payload_bytes, c.chunk_bytes)) throw ProtocolError("chunk index out of range");
}

// A chunk's resident inputs checked against its call, and the chunk against them: a held chunk is
// the server's to fill, never sent.
template <class Chunk>
void get_held_chunk(const Chunk& c, const std::vector<uint64_t>& input_bytes, int shared) {
  if (c.resident.empty()) return;
  resident_bytes_in_use(c.resident, input_bytes, shared);
  if (chunk_held(c.resident, input_bytes, c.payload_bytes, c.chunk_bytes, c.chunk_index))
    throw ProtocolError("chunk " + std::to_string(c.chunk_index) + " lies in a resident input: it is never sent");
}

// A length-prefixed run of bytes, at most max_len long (and at least one byte).
void put_blob(Writer& w, const std::vector<std::byte>& b) {
  w.u32(static_cast<uint32_t>(b.size()));
  w.bytes({reinterpret_cast<const uint8_t*>(b.data()), b.size()});
}
std::vector<std::byte> get_blob(Reader& r, size_t max_len, const char* what) {
  const uint32_t n = r.u32();
  if (n == 0 || n > max_len || n > r.remaining()) throw ProtocolError(std::string("invalid ") + what);
  std::vector<std::byte> b(n);
  r.bytes({reinterpret_cast<uint8_t*>(b.data()), b.size()});
  return b;
}

void put_extents(Writer& w, const std::vector<Extent>& xs) {
  w.u32(static_cast<uint32_t>(xs.size()));
  for (const Extent& x : xs) {
    w.u64(x.address);
    w.u64(x.bytes);
    w.u32(x.key);
  }
}
// Extents that exactly cover `needed` bytes with keys below `keys`.
std::vector<Extent> get_extents(Reader& r, uint64_t needed, size_t keys, const char* what) {
  const uint32_t n = r.u32();
  if (n == 0 || n > kMaxExtents) throw ProtocolError(std::string("invalid number of ") + what + " extents");
  std::vector<Extent> xs(n);
  uint64_t total = 0;
  for (Extent& x : xs) {
    x.address = r.u64();
    x.bytes = r.u64();
    x.key = r.u32();
    if (x.bytes == 0 || x.address > UINT64_MAX - x.bytes || x.key >= keys || x.bytes > needed - total)
      throw ProtocolError(std::string("invalid ") + what + " extent");
    total += x.bytes;
  }
  if (total != needed)
    throw ProtocolError(std::string(what) + " extents cover " + std::to_string(total) + " bytes, the call's arrays " +
                        std::to_string(needed));
  return xs;
}

// A direct call's memory keys: 1 .. kMaxDirectKeys of them.
void put_keys(Writer& w, const std::vector<std::vector<std::byte>>& keys) {
  w.u32(static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) put_blob(w, k);
}
// A list of TCP ports (AuthResult's siblings and lane ports): at most `max`, none 0.
std::vector<uint16_t> ports(Reader& r, uint32_t max, const char* what) {
  const uint32_t count = r.u32();
  if (count > max)
    throw ProtocolError("authentication result names " + std::to_string(count) + " " + what + " (at most " +
                        std::to_string(max) + ")");
  std::vector<uint16_t> out;
  for (uint32_t i = 0; i < count; ++i) {
    out.push_back(r.u16());
    if (out.back() == 0) throw ProtocolError(std::string("authentication result names port 0 among its ") + what);
  }
  return out;
}

std::vector<std::vector<std::byte>> get_keys(Reader& r) {
  const uint32_t n = r.u32();
  if (n == 0 || n > kMaxDirectKeys) throw ProtocolError("invalid number of memory keys");
  std::vector<std::vector<std::byte>> keys;
  for (uint32_t i = 0; i < n; ++i) keys.push_back(get_blob(r, kMaxKeyBytes, "memory key"));
  return keys;
}

// A message whose only field is its call id.
template <class T>
T call_id_only(Reader& r) {
  T m;
  m.call_id = r.u64();
  return m;
}

}  // namespace

std::vector<uint64_t> input_bytes(const Level3Call& c) {
  std::vector<uint64_t> v;
  for (const Operand& o : layout(c).inputs) v.push_back(uint64_t(o.rows) * uint64_t(o.cols) * element_bytes(c.scalar));
  return v;
}

std::vector<uint64_t> input_bytes(const LapackCall& c) {
  std::vector<uint64_t> v;
  for (const LapackArray& a : layout(c).inputs) v.push_back(array_bytes(a, c.scalar));
  return v;
}

int shared_input(const Level3Call& c) { return c.output_sent ? int(layout(c).inputs.size()) - 1 : -1; }


Type type_of(const Message& m) {
  // Indexed by the variant's alternatives, in order.
  static constexpr Type kTypes[] = {Type::hello,          Type::challenge,    Type::auth,  Type::auth_result,
                                    Type::blas3_call,     Type::call_reply,   Type::status_request,
                                    Type::status_reply,   Type::error,        Type::ping,  Type::pong,
                                    Type::lapack_call,    Type::lapack_reply, Type::call_chunk, Type::reply_chunk,
                                    Type::lapack_chunk,   Type::lanes_request, Type::lanes_reply,
                                    Type::direct_lapack,  Type::proceed,      Type::input_taken,
                                    Type::sink_request,   Type::sink_reply,   Type::fft_plan,
                                    Type::fft_release,    Type::fft_execute,  Type::fft_chunk, Type::fft_reply,
                                    Type::direct_fft,     Type::direct_blas3, Type::cl_request,
                                    Type::cl_reply,       Type::cl_notice,   Type::hold,
                                    Type::join_session,   Type::session_joined, Type::enveloped,
                                    Type::cl_chunk};
  static_assert(std::size(kTypes) == std::variant_size_v<Message>);
  return kTypes[m.index()];
}

std::vector<std::byte> encode(const Message& m) {
  std::vector<std::byte> out;
  out.reserve(128);
  Writer w(out);
  w.u32(kMagic);
  w.u16(kProtocolVersion);
  w.u16(static_cast<uint16_t>(type_of(m)));
  std::visit(overloaded{
                 [&](const Hello& h) {
                   w.bytes(h.client_nonce);
                   w.str(h.client_name);
                   w.str(h.identity);
                   w.u8(h.encrypt);
                 },
                 [&](const Challenge& c) {
                   w.bytes(c.server_nonce);
                   w.bytes(c.server_proof);
                   w.str(c.server_name);
                   w.u8(c.encrypt);
                 },
                 [&](const Auth& a) { w.bytes(a.client_proof); },
                 [&](const AuthResult& a) {
                   w.u8(a.accepted);
                   w.str(a.message);
                   put_load(w, a.load);
                   w.u8(a.encrypted);
                   w.u32(static_cast<uint32_t>(a.siblings.size()));
                   for (uint16_t port : a.siblings) w.u16(port);
                   w.u64(a.resident_bytes);
                   w.u32(a.lanes);
                   w.u32(static_cast<uint32_t>(a.lane_ports.size()));
                   for (uint16_t port : a.lane_ports) w.u16(port);
                 },
                 [&](const JoinSession& j) {
                   w.bytes(j.server_nonce);
                   w.u32(j.lane);
                   w.bytes(j.proof);
                 },
                 [&](const SessionJoined& j) {
                   w.u8(j.ok);
                   w.str(j.message);
                 },
                 [&](const Enveloped& e) {
                   w.u64(e.header_bytes);
                   w.u64(e.payload_bytes);
                 },
                 [&](const Blas3Call& b) {
                   w.u64(b.call_id);
                   put_call(w, b.call);
                   w.u64(b.payload_bytes);
                   put_resident(w, b.resident);
                 },
                 [&](const CallReply& r) {
                   w.u64(r.call_id);
                   w.u8(r.ok);
                   w.str(r.message);
                   w.u64(r.payload_bytes);
                   put_times(w, r);
                 },
                 [&](const StatusRequest& s) { w.u64(s.call_id); },
                 [&](const Hold& h) { w.u32(h.handshakes_waiting); },
                 [&](const StatusReply& s) {
                   w.u64(s.call_id);
                   w.str(s.json);
                 },
                 [&](const ErrorMessage& e) { w.str(e.message); },
                 [&](const Ping& p) {
                   w.u64(p.call_id);
                   w.u64(p.payload_bytes);
                   w.u8(p.flags);
                 },
                 [&](const Pong& p) {
                   w.u64(p.call_id);
                   w.u64(p.payload_bytes);
                   w.u64(p.gpu_ns);
                   put_load(w, p.load);
                 },
                 [&](const CallChunk& c) {
                   w.u64(c.call_id);
                   put_call(w, c.call);
                   put_chunking(w, c);
                   put_resident(w, c.resident);
                 },
                 [&](const ReplyChunk& c) {
                   w.u64(c.call_id);
                   w.u64(c.offset);
                   w.u64(c.bytes);
                 },
                 [&](const LapackRequest& q) {
                   w.u64(q.call_id);
                   put_lapack(w, q.call);
                   w.u64(q.payload_bytes);
                   put_resident(w, q.resident);
                 },
                 [&](const LapackChunk& c) {
                   w.u64(c.call_id);
                   put_lapack(w, c.call);
                   put_chunking(w, c);
                   put_resident(w, c.resident);
                 },
                 [&](const LanesRequest& q) {
                   w.u64(q.call_id);
                   put_blob(w, q.worker_address);
                   w.u32(q.pid);
                   w.u64(q.probe_address);
                 },
                 [&](const LanesReply& q) {
                   w.u64(q.call_id);
                   w.u32(q.lanes);
                   w.str(q.message);
                 },
                 [&](const DirectLapack& d) {
                   w.u64(d.call_id);
                   put_lapack(w, d.call);
                   put_keys(w, d.keys);
                   put_extents(w, d.input);
                   put_extents(w, d.output);
                   w.u8(d.gated ? 1 : 0);
                 },
                 [&](const Proceed& q) { w.u64(q.call_id); },
                 [&](const InputTaken& q) { w.u64(q.call_id); },
                 [&](const SinkRequest& q) { w.u64(q.call_id); },
                 [&](const SinkReply& q) {
                   w.u64(q.call_id);
                   w.u32(q.sink);
                   w.u64(q.max_bytes);
                   w.str(q.message);
                 },
                 [&](const FftPlan& q) { encode_body(w, q); },
                 [&](const ClRequest& q) { encode_body(w, q); },
                 [&](const ClReply& q) { encode_body(w, q); },
                 [&](const ClChunk& q) { encode_body(w, q); },
                 [&](const ClNotice& q) { encode_body(w, q); },
                 [&](const FftRelease& q) { encode_body(w, q); },
                 [&](const FftExecute& q) { encode_body(w, q); },
                 [&](const FftChunk& q) { encode_body(w, q); },
                 [&](const FftReply& q) { encode_body(w, q); },
                 [&](const DirectBlas3& d) {
                   w.u64(d.call_id);
                   put_call(w, d.call);
                   put_keys(w, d.keys);
                   put_extents(w, d.input);
                   put_extents(w, d.output);
                   w.u8(d.gated ? 1 : 0);
                 },
                 [&](const DirectFft& d) {
                   w.u64(d.call_id);
                   w.u64(d.plan_id);
                   encode(w, d.shape);
                   put_keys(w, d.keys);
                   put_extents(w, d.input);
                   put_extents(w, d.output);
                 },
                 [&](const LapackReply& r) {
                   w.u64(r.call_id);
                   w.u8(r.ok);
                   w.str(r.message);
                   w.i64(r.info);
                   w.u64(r.payload_bytes);
                   put_times(w, r);
                 },
             },
             m);
  return out;
}

void encode_ping(const Ping& p, std::span<std::byte, kPingBytes> out) {
  const uint16_t version = kProtocolVersion, type = static_cast<uint16_t>(Type::ping);
  std::byte* o = out.data();
  std::memcpy(o, &kMagic, 4);  // little-endian, as Writer
  std::memcpy(o + 4, &version, 2);
  std::memcpy(o + 6, &type, 2);
  std::memcpy(o + 8, &p.call_id, 8);
  std::memcpy(o + 16, &p.payload_bytes, 8);
  std::memcpy(o + 24, &p.flags, 1);
}

namespace {
bool valid_ping_flags(uint8_t f) {
  if (f & ~(Ping::echo | Ping::via_gpu | Ping::no_reply | Ping::fill)) return false;
  if ((f & Ping::fill) && f != Ping::fill) return false;
  return !((f & Ping::no_reply) && (f & ~Ping::no_reply));
}
}  // namespace

bool decode_ping(std::span<const std::byte> bytes, Ping& out) {
  if (bytes.size() != kPingBytes) return false;
  uint32_t magic;
  uint16_t version, type;
  std::memcpy(&magic, bytes.data(), 4);
  std::memcpy(&version, bytes.data() + 4, 2);
  std::memcpy(&type, bytes.data() + 6, 2);
  if (magic != kMagic || version != kProtocolVersion || type != static_cast<uint16_t>(Type::ping)) return false;
  Ping p;
  std::memcpy(&p.call_id, bytes.data() + 8, 8);
  std::memcpy(&p.payload_bytes, bytes.data() + 16, 8);
  std::memcpy(&p.flags, bytes.data() + 24, 1);
  if (!valid_ping_flags(p.flags)) return false;
  out = p;
  return true;
}

Message decode(std::span<const std::byte> bytes) {
  Reader r(bytes);
  uint32_t magic = r.u32();
  if (magic != kMagic) throw ProtocolError("not an Outboard message (bad magic)");
  uint16_t version = r.u16();
  if (version != kProtocolVersion)
    throw ProtocolError("protocol version " + std::to_string(version) + " is not supported (this side speaks " +
                        std::to_string(kProtocolVersion) + ")");
  Message m;
  switch (static_cast<Type>(r.u16())) {
    case Type::hello: {
      Hello h;
      r.bytes(h.client_nonce);
      h.client_name = r.str(kMaxText);
      h.identity = r.str(kMaxIdentity);
      h.encrypt = r.boolean();
      m = h;
      break;
    }
    case Type::challenge: {
      Challenge c;
      r.bytes(c.server_nonce);
      r.bytes(c.server_proof);
      c.server_name = r.str(kMaxText);
      c.encrypt = r.boolean();
      m = c;
      break;
    }
    case Type::auth: {
      Auth a;
      r.bytes(a.client_proof);
      m = a;
      break;
    }
    case Type::auth_result: {
      AuthResult a;
      a.accepted = r.boolean();
      a.message = r.str(kMaxText);
      a.load = get_load(r);
      a.encrypted = r.boolean();
      a.siblings = ports(r, kMaxSiblings, "sibling servers' ports");
      a.resident_bytes = r.u64();
      a.lanes = r.u32();
      if (a.lanes < 1 || a.lanes > kMaxLanes)
        throw ProtocolError("authentication result offers " + std::to_string(a.lanes) + " lanes (1 to " +
                            std::to_string(kMaxLanes) + ")");
      a.lane_ports = ports(r, kMaxLanes, "lane ports");
      m = a;
      break;
    }
    case Type::join_session: {
      JoinSession j;
      r.bytes(j.server_nonce);
      j.lane = r.u32();
      if (j.lane < 1 || j.lane >= kMaxLanes)
        throw ProtocolError("join names lane " + std::to_string(j.lane) + " (1 to " + std::to_string(kMaxLanes - 1) +
                            ")");
      r.bytes(j.proof);
      m = j;
      break;
    }
    case Type::session_joined: {
      SessionJoined j;
      j.ok = r.boolean();
      j.message = r.str(kMaxText);
      m = j;
      break;
    }
    case Type::enveloped: {
      Enveloped e;
      e.header_bytes = r.u64();
      e.payload_bytes = r.u64();
      if (e.header_bytes <= kMaxHeaderBytes || e.header_bytes > kMaxEnvelopedHeader)
        throw ProtocolError("an enveloped message of " + std::to_string(e.header_bytes) + " bytes (more than " +
                            std::to_string(kMaxHeaderBytes) + ", at most " + std::to_string(kMaxEnvelopedHeader) + ")");
      if (e.payload_bytes > std::numeric_limits<uint64_t>::max() - e.header_bytes)
        throw ProtocolError("an enveloped message's payload size overflows");
      m = e;
      break;
    }
    case Type::blas3_call: {
      Blas3Call b;
      b.call_id = r.u64();
      b.call = get_call(r);
      b.payload_bytes = r.u64();
      b.resident = get_resident(r);
      const uint64_t held = resident_bytes_in_use(b.resident, input_bytes(b.call), shared_input(b.call));
      if (b.payload_bytes != request_bytes(b.call) - held)
        throw ProtocolError("BLAS call announces " + std::to_string(b.payload_bytes) + " payload bytes, its matrices need " +
                            std::to_string(request_bytes(b.call) - held));
      m = b;
      break;
    }
    case Type::call_reply: {
      CallReply c;
      c.call_id = r.u64();
      c.ok = r.boolean();
      c.message = r.str(kMaxText);
      c.payload_bytes = r.u64();
      get_times(r, c);
      m = c;
      break;
    }
    case Type::status_request:
      m = call_id_only<StatusRequest>(r);
      break;
    case Type::status_reply: {
      StatusReply s;
      s.call_id = r.u64();
      s.json = r.str(kMaxStatusJson);
      m = s;
      break;
    }
    case Type::hold: {
      Hold h;
      h.handshakes_waiting = r.u32();
      m = h;
      break;
    }
    case Type::error: {
      ErrorMessage e;
      e.message = r.str(kMaxText);
      m = e;
      break;
    }
    case Type::ping: {
      Ping p;
      p.call_id = r.u64();
      p.payload_bytes = r.u64();
      p.flags = r.u8();
      if (p.flags & ~(Ping::echo | Ping::via_gpu | Ping::no_reply | Ping::fill)) throw ProtocolError("unknown ping flags");
      if (!valid_ping_flags(p.flags)) throw ProtocolError("invalid ping flags");
      m = p;
      break;
    }
    case Type::pong: {
      Pong p;
      p.call_id = r.u64();
      p.payload_bytes = r.u64();
      p.gpu_ns = r.u64();
      p.load = get_load(r);
      m = p;
      break;
    }
    case Type::call_chunk: {
      CallChunk c;
      c.call_id = r.u64();
      c.call = get_call(r);
      get_chunking(r, c, request_bytes(c.call), "BLAS");
      c.resident = get_resident(r);
      get_held_chunk(c, input_bytes(c.call), shared_input(c.call));
      m = c;
      break;
    }
    case Type::lapack_chunk: {
      LapackChunk c;
      c.call_id = r.u64();
      c.call = get_lapack(r);
      get_chunking(r, c, request_bytes(c.call), "LAPACK");
      c.resident = get_resident(r);
      get_held_chunk(c, input_bytes(c.call), -1);
      m = c;
      break;
    }
    case Type::reply_chunk: {
      ReplyChunk c;
      c.call_id = r.u64();
      c.offset = r.u64();
      c.bytes = r.u64();
      if (c.bytes == 0 || c.offset > UINT64_MAX - c.bytes) throw ProtocolError("invalid result chunk");
      m = c;
      break;
    }
    case Type::lapack_call: {
      LapackRequest q;
      q.call_id = r.u64();
      q.call = get_lapack(r);
      q.payload_bytes = r.u64();
      q.resident = get_resident(r);
      const uint64_t held = resident_bytes_in_use(q.resident, input_bytes(q.call), -1);
      if (q.payload_bytes != request_bytes(q.call) - held)
        throw ProtocolError("LAPACK call announces " + std::to_string(q.payload_bytes) +
                            " payload bytes, its arrays need " + std::to_string(request_bytes(q.call) - held));
      m = q;
      break;
    }
    case Type::lapack_reply: {
      LapackReply c;
      c.call_id = r.u64();
      c.ok = r.boolean();
      c.message = r.str(kMaxText);
      c.info = r.i64();
      c.payload_bytes = r.u64();
      get_times(r, c);
      m = c;
      break;
    }
    case Type::lanes_request: {
      LanesRequest q;
      q.call_id = r.u64();
      q.worker_address = get_blob(r, kMaxAddressBytes, "worker address");
      q.pid = r.u32();
      q.probe_address = r.u64();
      m = q;
      break;
    }
    case Type::lanes_reply: {
      LanesReply q;
      q.call_id = r.u64();
      q.lanes = r.u32();
      q.message = r.str(kMaxText);
      m = q;
      break;
    }
    case Type::direct_lapack: {
      DirectLapack d;
      d.call_id = r.u64();
      d.call = get_lapack(r);
      d.keys = get_keys(r);
      const uint64_t in = request_bytes(d.call), out = reply_bytes(d.call);
      if (in == 0 || out == 0) throw ProtocolError("a direct LAPACK call needs input and output arrays");
      d.input = get_extents(r, in, d.keys.size(), "input");
      d.output = get_extents(r, out, d.keys.size(), "output");
      d.gated = r.boolean();
      m = d;
      break;
    }
    case Type::proceed:
      m = call_id_only<Proceed>(r);
      break;
    case Type::input_taken:
      m = call_id_only<InputTaken>(r);
      break;
    case Type::sink_request:
      m = call_id_only<SinkRequest>(r);
      break;
    case Type::sink_reply: {
      SinkReply q;
      q.call_id = r.u64();
      q.sink = r.u32();
      q.max_bytes = r.u64();
      q.message = r.str(kMaxText);
      m = q;
      break;
    }
    case Type::fft_plan:
      m = decode_fft_plan(r);
      break;
    case Type::fft_release:
      m = decode_fft_release(r);
      break;
    case Type::fft_execute:
      m = decode_fft_execute(r);
      break;
    case Type::fft_chunk:
      m = decode_fft_chunk(r);
      break;
    case Type::fft_reply:
      m = decode_fft_reply(r);
      break;
    case Type::direct_fft: {
      DirectFft d;
      d.call_id = r.u64();
      d.plan_id = r.u64();
      if (d.plan_id == 0) throw ProtocolError("FFT plan id 0 is not valid");
      d.shape = decode_fft_shape(r);
      d.keys = get_keys(r);
      d.input = get_extents(r, input_bytes(d.shape), d.keys.size(), "input");
      d.output = get_extents(r, output_bytes(d.shape), d.keys.size(), "output");
      m = d;
      break;
    }
    case Type::direct_blas3: {
      DirectBlas3 d;
      d.call_id = r.u64();
      d.call = get_call(r);
      d.keys = get_keys(r);
      const uint64_t in = request_bytes(d.call), out = reply_bytes(d.call);
      if (in == 0 || out == 0) throw ProtocolError("a direct BLAS call needs input and output matrices");
      d.input = get_extents(r, in, d.keys.size(), "input");
      d.output = get_extents(r, out, d.keys.size(), "output");
      d.gated = r.boolean();
      m = d;
      break;
    }
    case Type::cl_request:
      m = decode_cl_request(r);
      break;
    case Type::cl_reply:
      m = decode_cl_reply(r);
      break;
    case Type::cl_notice:
      m = decode_cl_notice(r);
      break;
    case Type::cl_chunk:
      m = decode_cl_chunk(r);
      break;
    default:
      throw ProtocolError("unknown message type");
  }
  r.expect_end();
  return m;
}

namespace {
std::span<const uint8_t> label(const char* s) { return {reinterpret_cast<const uint8_t*>(s), std::char_traits<char>::length(s)}; }
}  // namespace

Mac server_proof(const Secret& s, const Nonce& client_nonce, const Nonce& server_nonce) {
  return compute_mac(s, {label("outboard-server"), client_nonce, server_nonce});
}

Mac client_proof(const Secret& s, const Nonce& server_nonce, const Nonce& client_nonce) {
  return compute_mac(s, {label("outboard-client"), server_nonce, client_nonce});
}

Mac lane_proof(const Secret& s, const Nonce& server_nonce, const Nonce& client_nonce, uint32_t lane) {
  const std::array<uint8_t, 4> number{static_cast<uint8_t>(lane >> 24), static_cast<uint8_t>(lane >> 16),
                                      static_cast<uint8_t>(lane >> 8), static_cast<uint8_t>(lane)};
  return compute_mac(s, {label("outboard-lane"), server_nonce, client_nonce, number});
}

}  // namespace outboard::wire
