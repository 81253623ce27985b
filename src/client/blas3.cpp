// The BLAS Level-3 offload path: offload_level3 packs the operands, sends the call (whole, or in
// chunks when large), and unpacks the result into the application's matrix.
#include <algorithm>
#include <cstring>

#include "client/runtime_internal.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"

namespace outboard::client {
namespace {

// Contiguous when the leading dimension equals the rows: then it travels without a copy.
transport::Segment pack(const wire::Operand& o, MatrixRef m, wire::Scalar s, std::vector<transport::Buffer>& scratch) {
  return pack_columns(o.rows, o.cols, wire::element_bytes(s), m, scratch);
}

// Copies the packed result into the application's matrix: all of it, or only the uplo triangle
// for routines that define only that (the other triangle must stay untouched).
void unpack(const std::byte* src, const wire::Operand& o, MatrixRef m, const wire::Level3Call& c, bool triangle) {
  const size_t e = wire::element_bytes(c.scalar);
  auto* dst = static_cast<std::byte*>(const_cast<void*>(m.data));
  for (int64_t j = 0; j < o.cols; ++j) {
    int64_t first = 0, last = o.rows;  // rows [first, last)
    if (triangle) {
      if (c.uplo == 'U') last = std::min<int64_t>(j + 1, o.rows);
      else first = j;
    }
    if (first < last)
      std::memcpy(dst + (static_cast<size_t>(j) * m.ld + first) * e, src + (static_cast<size_t>(j) * o.rows + first) * e,
                  static_cast<size_t>(last - first) * e);
  }
}

}  // namespace

bool offload_level3(wire::Level3Call call, const MatrixRef* inputs, MatrixRef output) noexcept {
  std::string name;
  return guarded(name, [&] {
    Runtime& rt = runtime();
    name = wire::call_name(call);
    if (!rt.wants_remote(wire::flops(call))) return rt.ran_locally(name);
    const FallBack fall_back{rt, name};
    // beta = 0 means C is not read: it need not travel (trmm/trsm's B always does).
    const bool in_place = call.routine == wire::Routine::trmm || call.routine == wire::Routine::trsm;
    call.output_sent = in_place || call.beta[0] != 0 || call.beta[1] != 0;
    wire::validate(call);
    const wire::Layout l = wire::layout(call);
    std::string why;
    std::shared_ptr<Connection> conn = rt.connection(why);
    if (!conn) return fall_back(why);
    const uint64_t t0 = now_ns();
    std::vector<transport::Buffer> scratch;
    std::vector<transport::Segment> payload;
    for (size_t i = 0; i < l.inputs.size(); ++i) {
      bool is_output = call.output_sent && i + 1 == l.inputs.size();
      payload.push_back(pack(l.inputs[i], is_output ? output : inputs[i], call.scalar, scratch));
    }
    const uint64_t reply_bytes = wire::reply_bytes(call);
    // With beta = 0 the old C is never needed, even by a local rerun after a failure: a contiguous
    // C can take the result directly. Otherwise the result lands aside and is copied in on success.
    const bool into_c = !call.output_sent && !l.output_triangle && (l.output.cols <= 1 || output.ld == l.output.rows);
    transport::Buffer result = into_c ? transport::Buffer::borrow(const_cast<void*>(output.data), reply_bytes)
                                      : transport::Buffer::allocate(reply_bytes);

    const uint64_t chunk = static_cast<uint64_t>(rt.settings().chunk_bytes);
    const bool chunked = chunk && wire::request_bytes(call) >= 2 * chunk;  // result comes in pieces, not in the reply
    const uint64_t t1 = now_ns();
    wire::Message reply;
    try {
      if (chunked)
        reply = conn->chunked_request(
            wire::CallChunk{0, call, wire::request_bytes(call), chunk, 0}, std::move(payload),
            [&result](uint64_t offset, uint64_t) { return result.data() + offset; }, reply_bytes,
            rt.settings().timeout_seconds, static_cast<unsigned>(rt.settings().chunk_window));
      else
        reply = conn->request(wire::Blas3Call{0, call, wire::request_bytes(call)}, std::move(payload), result.data(),
                              reply_bytes, rt.settings().timeout_seconds);
    } catch (const Error& e) {
      return fall_back(e.what());
    }
    const uint64_t t2 = now_ns();
    auto* r = std::get_if<wire::CallReply>(&reply);
    if (!r || !r->ok || r->payload_bytes != (chunked ? 0 : reply_bytes))
      return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
    if (!into_c) unpack(result.data(), l.output, output, call, l.output_triangle);
    rt.remote_succeeded();
    const uint64_t t3 = now_ns(), sent = wire::request_bytes(call);
    account(rt, name, name + " " + std::to_string(call.m) + "x" + std::to_string(call.n) + "x" + std::to_string(call.k),
            *r, {t0, t1, t2, t3}, sent, reply_bytes);
    return true;
  });
}

}  // namespace outboard::client
