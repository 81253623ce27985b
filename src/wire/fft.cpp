#include "wire/fft.hpp"

#include <cmath>

#include "common/error.hpp"
#include "wire/codec.hpp"
#include "wire/messages.hpp"  // kMaxText, kMinChunkBytes

namespace outboard::wire {
namespace {

// a * b, or a ProtocolError when the product passes kMaxFftElements.
int64_t times(int64_t a, int64_t b, const char* what) {
  if (b != 0 && a > kMaxFftElements / b)
    throw ProtocolError(std::string("FFT ") + what + " has too many elements (above 2^40)");
  return a * b;
}

// Elements of one transform's real side (prod n) and complex side (last dimension halved).
int64_t real_points(const FftShape& s) {
  int64_t p = 1;
  for (int64_t d : s.n) p = times(p, d, "size");
  return p;
}
int64_t half_points(const FftShape& s) {
  int64_t p = 1;
  for (size_t i = 0; i + 1 < s.n.size(); ++i) p = times(p, s.n[i], "size");
  return times(p, s.n.back() / 2 + 1, "size");
}

}  // namespace

void validate(const FftShape& s) {
  if (s.precision >= FftPrecision::count_) throw ProtocolError("unknown FFT precision id " + std::to_string(int(s.precision)));
  if (s.kind >= FftKind::count_) throw ProtocolError("unknown FFT kind id " + std::to_string(int(s.kind)));
  if (s.n.empty() || s.n.size() > kMaxFftRank)
    throw ProtocolError("FFT rank " + std::to_string(s.n.size()) + " is out of range (1.." + std::to_string(kMaxFftRank) + ")");
  for (int64_t d : s.n)
    if (d < 1 || d > kMaxFftElements) throw ProtocolError("FFT size " + std::to_string(d) + " is out of range");
  if (s.batch < 1 || s.batch > kMaxFftElements) throw ProtocolError("FFT batch " + std::to_string(s.batch) + " is out of range");
  const int expected = s.kind == FftKind::r2c ? -1 : s.kind == FftKind::c2r ? 1 : s.kind == FftKind::r2r ? 0 : s.sign;
  if (s.sign != expected || (s.kind == FftKind::c2c && s.sign != -1 && s.sign != 1))
    throw ProtocolError("FFT sign " + std::to_string(int(s.sign)) + " does not suit the transform kind");
  if (s.kind == FftKind::r2r) {
    if (s.r2r_kinds.size() != s.n.size()) throw ProtocolError("an r2r FFT needs one kind per dimension");
    for (uint8_t k : s.r2r_kinds)
      if (k > kMaxR2rKind) throw ProtocolError("unknown r2r kind " + std::to_string(int(k)));
  } else if (!s.r2r_kinds.empty()) {
    throw ProtocolError("r2r kinds given for a transform that is not r2r");
  }
  // Every count the layers compute must fit, bytes included (complex elements are 16 bytes).
  times(times(std::max(real_points(s), half_points(s)), s.batch, "problem"), 2, "problem");
}

size_t fft_real_bytes(FftPrecision p) { return p == FftPrecision::f32 ? 4 : 8; }

namespace {
bool complex_input(FftKind k) { return k == FftKind::c2c || k == FftKind::c2r; }
bool complex_output(FftKind k) { return k == FftKind::c2c || k == FftKind::r2c; }
int64_t input_points(const FftShape& s) { return s.kind == FftKind::c2r ? half_points(s) : real_points(s); }
int64_t output_points(const FftShape& s) { return s.kind == FftKind::r2c ? half_points(s) : real_points(s); }
}  // namespace

int64_t input_elements(const FftShape& s) { return input_points(s) * s.batch; }
int64_t output_elements(const FftShape& s) { return output_points(s) * s.batch; }

uint64_t input_bytes_per_transform(const FftShape& s) {
  return uint64_t(input_points(s)) * fft_real_bytes(s.precision) * (complex_input(s.kind) ? 2 : 1);
}
uint64_t output_bytes_per_transform(const FftShape& s) {
  return uint64_t(output_points(s)) * fft_real_bytes(s.precision) * (complex_output(s.kind) ? 2 : 1);
}
uint64_t input_bytes(const FftShape& s) { return input_bytes_per_transform(s) * uint64_t(s.batch); }
uint64_t output_bytes(const FftShape& s) { return output_bytes_per_transform(s) * uint64_t(s.batch); }

double flops(const FftShape& s) {
  double n = 1;
  for (int64_t d : s.n) n *= double(d);
  const double per = 5.0 * n * std::log2(std::max(n, 2.0));
  return (s.kind == FftKind::c2c ? per : per / 2) * double(s.batch);
}

std::string shape_name(const FftShape& s) {
  static const char* kinds[] = {"c2c", "r2c", "c2r", "r2r"};
  std::string out = std::string("dft ") + (s.kind < FftKind::count_ ? kinds[int(s.kind)] : "?") +
                    (s.precision == FftPrecision::f32 ? " f32 " : " f64 ");
  for (size_t i = 0; i < s.n.size(); ++i) out += (i ? "x" : "") + std::to_string(s.n[i]);
  if (s.batch != 1) out += " *" + std::to_string(s.batch);
  return out;
}

void encode(Writer& w, const FftShape& s) {
  w.u8(static_cast<uint8_t>(s.precision));
  w.u8(static_cast<uint8_t>(s.kind));
  w.u8(static_cast<uint8_t>(s.sign));
  w.u8(static_cast<uint8_t>(s.n.size()));
  for (int64_t d : s.n) w.i64(d);
  w.i64(s.batch);
  w.u8(static_cast<uint8_t>(s.r2r_kinds.size()));
  for (uint8_t k : s.r2r_kinds) w.u8(k);
}

FftShape decode_fft_shape(Reader& r) {
  FftShape s;
  s.precision = static_cast<FftPrecision>(r.u8());
  s.kind = static_cast<FftKind>(r.u8());
  s.sign = static_cast<int8_t>(r.u8());
  const size_t rank = r.u8();
  if (rank > kMaxFftRank) throw ProtocolError("FFT rank " + std::to_string(rank) + " is out of range");
  for (size_t i = 0; i < rank; ++i) s.n.push_back(r.i64());
  s.batch = r.i64();
  const size_t kinds = r.u8();
  if (kinds > kMaxFftRank) throw ProtocolError("too many r2r kinds");
  for (size_t i = 0; i < kinds; ++i) s.r2r_kinds.push_back(r.u8());
  validate(s);
  return s;
}

namespace {
uint64_t nonzero_id(Reader& r, const char* what) {
  const uint64_t id = r.u64();
  if (id == 0) throw ProtocolError(std::string(what) + " id 0 is not valid");
  return id;
}
}  // namespace

void encode_body(Writer& w, const FftPlan& m) {
  w.u64(m.plan_id);
  encode(w, m.shape);
}
void encode_body(Writer& w, const FftRelease& m) { w.u64(m.plan_id); }
void encode_body(Writer& w, const FftExecute& m) {
  w.u64(m.call_id);
  w.u64(m.plan_id);
  encode(w, m.shape);
  w.u64(m.payload_bytes);
  put_resident(w, m.resident);
  w.u8(m.output_known ? 1 : 0);
  if (m.output_known)
    for (uint64_t v : m.output_digest) w.u64(v);
}
void encode_body(Writer& w, const FftChunk& m) {
  w.u64(m.call_id);
  w.u64(m.plan_id);
  encode(w, m.shape);
  for (uint64_t v : {m.payload_bytes, m.chunk_bytes, m.chunk_index}) w.u64(v);
}
void encode_body(Writer& w, const FftReply& m) {
  w.u64(m.call_id);
  w.u8(m.ok ? 1 : 0);
  w.str(m.message);
  w.u64(m.payload_bytes);
  for (uint64_t v : {m.receive_ns, m.queue_ns, m.to_device_ns, m.compute_ns, m.from_device_ns, m.plan_wait_ns}) w.u64(v);
  w.str(m.backend);
  put_load(w, m.load);
  w.u8(m.output_unchanged ? 1 : 0);
}

FftPlan decode_fft_plan(Reader& r) {
  FftPlan m;
  m.plan_id = nonzero_id(r, "FFT plan");
  m.shape = decode_fft_shape(r);
  return m;
}
FftRelease decode_fft_release(Reader& r) { return {nonzero_id(r, "FFT plan")}; }
namespace {
void check_input(uint64_t announced, const FftShape& s) {
  if (announced != input_bytes(s))
    throw ProtocolError("FFT execution announces " + std::to_string(announced) + " payload bytes, " + shape_name(s) +
                        " takes " + std::to_string(input_bytes(s)));
}
}  // namespace

FftExecute decode_fft_execute(Reader& r) {
  FftExecute m;
  m.call_id = r.u64();
  m.plan_id = nonzero_id(r, "FFT plan");
  m.shape = decode_fft_shape(r);
  m.payload_bytes = r.u64();
  m.resident = get_resident(r);
  const uint64_t held = resident_bytes_in_use(m.resident, {input_bytes(m.shape)}, -1);
  if (held) {
    if (m.payload_bytes != 0) throw ProtocolError("an FFT execution sends the input it says the server holds");
  } else {
    check_input(m.payload_bytes, m.shape);
  }
  m.output_known = r.boolean();
  if (m.output_known)
    for (uint64_t& v : m.output_digest) v = r.u64();
  return m;
}
FftChunk decode_fft_chunk(Reader& r) {
  FftChunk m;
  m.call_id = r.u64();
  m.plan_id = nonzero_id(r, "FFT plan");
  m.shape = decode_fft_shape(r);
  m.payload_bytes = r.u64();
  m.chunk_bytes = r.u64();
  m.chunk_index = r.u64();
  check_input(m.payload_bytes, m.shape);
  if (m.chunk_bytes < kMinChunkBytes) throw ProtocolError("chunk size below the minimum");
  if (m.chunk_index >= (m.payload_bytes + m.chunk_bytes - 1) / m.chunk_bytes)
    throw ProtocolError("chunk index out of range");
  return m;
}
FftReply decode_fft_reply(Reader& r) {
  FftReply m;
  m.call_id = r.u64();
  m.ok = r.boolean();
  m.message = r.str(kMaxText);
  m.payload_bytes = r.u64();
  for (uint64_t* v : {&m.receive_ns, &m.queue_ns, &m.to_device_ns, &m.compute_ns, &m.from_device_ns, &m.plan_wait_ns})
    *v = r.u64();
  m.backend = r.str(kMaxText);
  m.load = get_load(r);
  m.output_unchanged = r.boolean();
  if (m.output_unchanged && (!m.ok || m.payload_bytes != 0))
    throw ProtocolError("an FFT reply says the output is unchanged and is not a success without payload");
  return m;
}

}  // namespace outboard::wire
