// libFuzzer target for the wire decoder, the first code that touches a peer's bytes.
//
// Contract under test: wire::decode() either returns a message or throws ProtocolError. Anything
// else (another exception, a crash, an overread or undefined behaviour seen by ASan/UBSan, an
// allocation over -rss_limit_mb) is a finding. For a decoded message the target also checks:
//   - encode(decode(x)) == x: the encoding is canonical, so nothing is lost or invented;
//   - a decoded LapackRequest likewise (check_lapack), and a decoded FftPlan (check_fft);
//   - decode_ping (the server's streaming fast path) accepts exactly the inputs decode() returns
//     as a Ping, with the same fields;
//   - a decoded Blas3Call is valid, and layout/request_bytes/reply_bytes/flops work on it without
//     throwing, agree with its payload_bytes, and give sane values.
// The same bytes also go to the decoder of dcuda's proxy messages (wire/dcuda.hpp) and to those of
// the OpenCL bulk results (wire/opencl.hpp: platform snapshot, device list, build result): each
// returns a value or throws ProtocolError, and what it returns encodes back to exactly the input.
// A failed check calls __builtin_trap() so that libFuzzer records the input as a crash.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <variant>
#include <vector>

#include "common/error.hpp"
#include "wire/dcuda.hpp"
#include "wire/level3.hpp"
#include "wire/messages.hpp"
#include "wire/opencl.hpp"

namespace {

using namespace outboard;
using namespace outboard::wire;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_call(const Blas3Call& b) {
  const Level3Call& c = b.call;
  validate(c);  // decode() validated it already: must not throw now
  Layout l = layout(c);
  check(!l.inputs.empty());
  check(l.output.rows >= 0 && l.output.cols >= 0);
  for (const Operand& o : l.inputs) check(o.rows >= 0 && o.cols >= 0 && o.rows <= kMaxDimension && o.cols <= kMaxDimension);
  // The output travels as the last input exactly when output_sent says so.
  const Operand& last = l.inputs.back();
  const bool last_is_output = l.inputs.size() > 1 && last.name == l.output.name && last.rows == l.output.rows &&
                              last.cols == l.output.cols;
  check(last_is_output == c.output_sent);
  const uint64_t req = request_bytes(c);
  const uint64_t rep = reply_bytes(c);
  // The payload leaves out the resident inputs in use (checked again: decode() must have).
  check(req - resident_bytes_in_use(b.resident, input_bytes(c), shared_input(c)) == b.payload_bytes);
  if (c.output_sent) check(req >= rep);
  check(rep == uint64_t(l.output.rows) * uint64_t(l.output.cols) * element_bytes(c.scalar));
  const double f = flops(c);
  check(f >= 0 && !std::isnan(f));
  (void)call_name(c);
}

// A decoded LAPACK call: valid, and its layout and sizes agree with its payload.
void check_lapack(const LapackRequest& q) {
  const LapackCall& c = q.call;
  validate(c);
  const LapackLayout l = layout(c);
  check(!l.inputs.empty() && !l.outputs.empty());
  uint64_t in = 0, out = 0;
  for (const auto& a : l.inputs) check(a.rows >= 0 && a.cols >= 0), in += array_bytes(a, c.scalar);
  for (const auto& a : l.outputs) {
    check(a.rows >= 0 && a.cols >= 0 && a.from_input < int(l.inputs.size()));
    if (a.from_input >= 0) check(array_bytes(l.inputs[a.from_input], c.scalar) == array_bytes(a, c.scalar));
    out += array_bytes(a, c.scalar);
  }
  check(in - resident_bytes_in_use(q.resident, input_bytes(c), -1) == q.payload_bytes && in == request_bytes(c) &&
        out == reply_bytes(c));
  const double f = flops(c);
  check(f >= 0 && !std::isnan(f));
  (void)call_name(c);
}

// A decoded FFT plan: valid, and its sizes consistent and computable without throwing.
void check_fft(const FftPlan& p) {
  const FftShape& s = p.shape;
  validate(s);
  check(p.plan_id != 0 && !s.n.empty() && s.n.size() <= kMaxFftRank && s.batch >= 1);
  check(input_bytes(s) == input_bytes_per_transform(s) * uint64_t(s.batch));
  check(output_bytes(s) == output_bytes_per_transform(s) * uint64_t(s.batch));
  check(input_bytes(s) > 0 && output_bytes(s) > 0);
  const double f = flops(s);
  check(f >= 0 && !std::isnan(f));
  (void)shape_name(s);
}

// dcuda's proxy messages: canonical like the others.
void check_dcuda(std::span<const std::byte> in) {
  wire::dcuda::Message m;
  try {
    m = wire::dcuda::decode(in);
  } catch (const ProtocolError&) {
    return;
  }
  std::vector<std::byte> again;
  wire::dcuda::encode(m, again);
  check(again.size() == in.size() && (in.empty() || std::memcmp(again.data(), in.data(), in.size()) == 0));
}

// OpenCL bulk results (a server's reply payloads, which the client decodes): canonical too.
template <class Decode>
void check_cl_payload(std::span<const std::byte> in, Decode decode) {
  std::vector<std::byte> again;
  try {
    again = encode_cl(decode(in));
  } catch (const ProtocolError&) {
    return;
  }
  check(again.size() == in.size() && (in.empty() || std::memcmp(again.data(), in.data(), in.size()) == 0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  check_dcuda(in);
  check_cl_payload(in, decode_cl_snapshot);
  check_cl_payload(in, decode_cl_device_list);
  check_cl_payload(in, decode_cl_build_result);
  Message m;
  Ping fast;
  const bool fast_ok = decode_ping(in, fast);
  try {
    m = decode(in);
  } catch (const ProtocolError&) {
    check(!fast_ok);
    return 0;  // rejected: the expected outcome for almost every input
  }
  const auto* ping = std::get_if<Ping>(&m);
  check(fast_ok == (ping != nullptr));
  if (ping) check(fast.call_id == ping->call_id && fast.payload_bytes == ping->payload_bytes && fast.flags == ping->flags);
  // Not caught from here on: any exception escaping is a finding (std::terminate -> abort).
  std::vector<std::byte> again = encode(m);
  check(again.size() == size && (size == 0 || std::memcmp(again.data(), data, size) == 0));
  if (const auto* b = std::get_if<Blas3Call>(&m)) check_call(*b);
  if (const auto* q = std::get_if<LapackRequest>(&m)) check_lapack(*q);
  if (const auto* p = std::get_if<FftPlan>(&m)) check_fft(*p);
  return 0;
}
