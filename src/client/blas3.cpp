// The BLAS Level-3 offload path: offload_level3 packs the operands, sends the call (whole, or in
// chunks when large), and unpacks the result into the application's matrix; large calls take the
// direct path instead where the server offers copy lanes.
#include <algorithm>
#include <cstring>
#include <optional>

#include "client/level3_paths.hpp"
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

// A large call on the direct path: the server's copy lanes fetch the operands out of the
// program's matrices (or a packed copy of one that is not contiguous) while its pipeline computes
// blocks as their columns arrive, and write C's blocks straight into the program's C as they
// finish (aside instead, and copied in on success, where C is not contiguous or only a triangle
// of it is defined). A C that is also an input (beta != 0, trmm/trsm's B) is gated: the server
// writes nothing into it before its values are kept here, so a failed call reruns locally on them.
bool direct_level3(Runtime& rt, Connection& conn, const wire::Level3Call& call, const wire::Layout& l,
                   const MatrixRef* inputs, MatrixRef output, uint64_t t0, const FallBack& fall_back,
                   const std::string& name) {
  const Settings& settings = rt.settings();
  const size_t elem = wire::element_bytes(call.scalar);
  const uint64_t sent = wire::request_bytes(call), reply_bytes = wire::reply_bytes(call);
  auto contiguous = [](const wire::Operand& o, const MatrixRef& m) { return o.cols <= 1 || m.ld == o.rows; };
  wire::DirectBlas3 d{0, call, {}, {}, {}, false};
  std::vector<transport::Registration> registrations;
  std::vector<std::pair<const void*, uint64_t>> registered;  // one registration per memory range
  auto key = [&](const void* data, uint64_t bytes) {
    for (size_t k = 0; k < registered.size(); ++k)
      if (registered[k] == std::pair{data, bytes}) return static_cast<uint32_t>(k);
    registrations.push_back(conn.register_memory(const_cast<void*>(data), bytes));
    registered.emplace_back(data, bytes);
    d.keys.push_back(registrations.back().key());
    return static_cast<uint32_t>(registrations.size() - 1);
  };
  transport::Buffer packed, aside, kept;
  uint64_t offset = 0;
  for (size_t i = 0; i < l.inputs.size(); ++i) {
    const wire::Operand& o = l.inputs[i];
    const MatrixRef& m = call.output_sent && i + 1 == l.inputs.size() ? output : inputs[i];
    const uint64_t bytes = uint64_t(o.rows) * uint64_t(o.cols) * elem;
    if (bytes == 0) continue;
    if (contiguous(o, m)) {
      d.input.push_back({reinterpret_cast<uint64_t>(m.data), bytes, key(m.data, bytes)});
    } else {
      if (!packed.data()) packed = transport::Buffer::allocate(sent);
      const size_t col = size_t(o.rows) * elem;
      for (int64_t j = 0; j < o.cols; ++j)
        std::memcpy(packed.data() + offset + size_t(j) * col, static_cast<const std::byte*>(m.data) + size_t(j) * m.ld * elem, col);
      d.input.push_back({reinterpret_cast<uint64_t>(packed.data() + offset), bytes, key(packed.data(), sent)});
    }
    offset += bytes;
  }
  const bool into_c = !l.output_triangle && contiguous(l.output, output);
  if (into_c) {
    d.output.push_back({reinterpret_cast<uint64_t>(output.data), reply_bytes, key(output.data, reply_bytes)});
    d.gated = call.output_sent;
  } else {
    aside = transport::Buffer::allocate(reply_bytes);
    d.output.push_back({reinterpret_cast<uint64_t>(aside.data()), reply_bytes, key(aside.data(), reply_bytes)});
  }
  if (d.gated) kept = transport::Buffer::allocate(reply_bytes);
  auto keep = [&] {
    parallel_copy(kept.data(), static_cast<const std::byte*>(output.data), reply_bytes,
                  static_cast<unsigned>(settings.copy_threads));
  };
  const uint64_t t1 = now_ns();
  bool proceeded = false;
  wire::Message reply;
  auto restore = [&] {
    if (proceeded) std::memcpy(const_cast<void*>(output.data), kept.data(), reply_bytes);
  };
  try {
    const bool gated = d.gated;
    // C only written: its pages fault in here while the server fetches A and B.
    std::optional<Prefault> prefault;
    if (into_c && !gated) prefault.emplace(const_cast<void*>(output.data), reply_bytes, unsigned(settings.copy_threads));
    reply = conn.direct_request(std::move(d), gated, keep, proceeded, settings.timeout_seconds);
  } catch (const Error& e) {
    restore();
    return fall_back(e.what());
  }
  const uint64_t t2 = now_ns();
  auto* r = std::get_if<wire::CallReply>(&reply);
  if (!r || !r->ok || r->payload_bytes != 0) {
    restore();
    return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
  }
  if (!into_c) unpack(aside.data(), l.output, output, call, l.output_triangle);
  rt.remote_succeeded(t0);
  account(rt, name, name + " " + std::to_string(call.m) + "x" + std::to_string(call.n) + "x" + std::to_string(call.k),
          *r, {t0, t1, t2, now_ns()}, sent, reply_bytes, wire::flops(call));
  return true;
}

}  // namespace

bool level3_on(Runtime& rt, const std::shared_ptr<Connection>& conn, const FallBack& fall_back, const wire::Level3Call& call,
               const wire::Layout& l, const MatrixRef* inputs, MatrixRef output, const std::string& name) {
  const uint64_t t0 = now_ns();
  const uint64_t chunk = static_cast<uint64_t>(rt.settings().chunk_bytes);
  const bool chunked = chunk && wire::request_bytes(call) >= 2 * chunk;  // result comes in pieces, not in the reply
  if (chunked && rt.settings().direct) {
    uint32_t lanes = 0;
    try {
      lanes = conn->direct_lanes(rt.settings().timeout_seconds, rt.settings().direct_cma);
    } catch (const Error& e) {
      return fall_back(e.what());
    }
    if (lanes) return direct_level3(rt, *conn, call, l, inputs, output, t0, fall_back, name);
  }
  std::vector<transport::Buffer> scratch;
  std::vector<transport::Segment> payload;
  for (size_t i = 0; i < l.inputs.size(); ++i) {
    bool is_output = call.output_sent && i + 1 == l.inputs.size();
    payload.push_back(pack(l.inputs[i], is_output ? output : inputs[i], call.scalar, scratch));
  }
  const uint64_t reply_bytes = wire::reply_bytes(call);
  // Inputs the server holds from earlier calls are not sent: a whole call leaves them out of its
  // payload, a chunked one the chunks that lie in them (the server fills those).
  auto plan = [&] {
    return plan_resident(conn->resident(), rt.settings(), payload, wire::shared_input(call),
                         wire::request_bytes(call) + reply_bytes,
                         CallMemory{call.output_sent ? 0 : reply_bytes, chunked});
  };
  ResidentPlan resident = plan();
  // With beta = 0 the old C is never needed, even by a local rerun after a failure: a contiguous
  // C can take the result directly. Otherwise the result lands aside and is copied in on success.
  const bool into_c = !call.output_sent && !l.output_triangle && (l.output.cols <= 1 || output.ld == l.output.rows);
  transport::Buffer result = into_c ? transport::Buffer::borrow(const_cast<void*>(output.data), reply_bytes)
                                    : transport::Buffer::allocate(reply_bytes);

  const uint64_t t1 = now_ns();
  wire::Message reply;
  auto* r = static_cast<wire::CallReply*>(nullptr);
  try {
    std::optional<Prefault> prefault;
    if (into_c && chunked) prefault.emplace(result.data(), reply_bytes, unsigned(rt.settings().copy_threads));
    for (bool again = true;; again = false) {
      if (chunked)
        reply = conn->chunked_request(
            wire::CallChunk{0, call, wire::request_bytes(call), chunk, 0, resident.inputs}, payload,
            [&result](uint64_t offset, uint64_t) { return result.data() + offset; }, reply_bytes,
            rt.settings().timeout_seconds, static_cast<unsigned>(rt.settings().chunk_window));
      else
        reply = conn->request(wire::Blas3Call{0, call, resident.payload_bytes, resident.inputs}, resident.payload,
                              result.data(), reply_bytes, rt.settings().timeout_seconds);
      r = std::get_if<wire::CallReply>(&reply);
      // The server no longer holds an input (its other limits evicted it): once more, sent.
      if (!again || !r || r->ok || r->message != wire::kResidentMissing) break;
      conn->resident().forget(resident.inputs);
      resident = plan();
    }
  } catch (const Error& e) {
    return fall_back(e.what());
  }
  const uint64_t t2 = now_ns();
  if (!r || !r->ok || r->payload_bytes != (chunked ? 0 : reply_bytes))
    return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
  if (!into_c) unpack(result.data(), l.output, output, call, l.output_triangle);
  rt.remote_succeeded(t0);
  const uint64_t t3 = now_ns();
  const uint64_t sent = chunked ? wire::request_bytes(call) - wire::held_chunk_bytes(resident.inputs, wire::input_bytes(call),
                                                                                       wire::request_bytes(call), chunk)
                                  : resident.payload_bytes;
  account(rt, name, name + " " + std::to_string(call.m) + "x" + std::to_string(call.n) + "x" + std::to_string(call.k),
          *r, {t0, t1, t2, t3}, sent, reply_bytes, wire::flops(call));
  return true;
}

bool offload_level3(wire::Level3Call call, const MatrixRef* inputs, MatrixRef output, LocalLevel3 local) noexcept {
  std::string name;
  return guarded(name, [&] {
    Runtime& rt = runtime();
    name = wire::call_name(call);
    call.output_sent = output_read(call);
    if (!rt.wants_remote(level3_cost(name, call))) return rt.ran_locally(name);
    wire::validate(call);
    if (std::optional<bool> spread = split_level3(rt, call, inputs, output, local, name)) return *spread;
    const wire::Layout l = wire::layout(call);
    return on_servers(rt, name, [&](const std::shared_ptr<Connection>& conn, const FallBack& fall_back) {
      return level3_on(rt, conn, fall_back, call, l, inputs, output, name);
    });
  });
}

}  // namespace outboard::client
