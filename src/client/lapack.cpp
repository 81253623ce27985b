// The LAPACK offload path: offload_lapack sends a call whole (small), in chunks packed a little
// ahead of the sends (large), or on the direct path, where the server copies the arrays out of
// and into this process's memory over its copy lanes (large, where the server offers lanes).
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <thread>

#include "client/reply_outputs.hpp"
#include "client/runtime_internal.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"

namespace outboard::client {
namespace {

// Where each of `arrays` starts when they are packed one after another.
std::vector<uint64_t> packed_offsets(const std::vector<wire::LapackArray>& arrays, wire::Scalar scalar) {
  std::vector<uint64_t> out;
  uint64_t at = 0;
  for (const auto& a : arrays) out.push_back(at), at += wire::array_bytes(a, scalar);
  return out;
}

// "dgesv 0x16384x1": a LAPACK call in reports and traces (m x n x nrhs; orgqr, ormqr: m x n x k).
std::string lapack_label(const wire::LapackCall& c) {
  const int64_t third = c.k ? c.k : c.nrhs;
  return wire::call_name(c) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(third);
}

// The bytes [begin, end) of the packed arrays `arrays` (wire::layout order) copied from the
// application's arrays `refs` into `packed`.
void pack_range(const std::vector<wire::LapackArray>& arrays, const MatrixRef* refs, wire::Scalar scalar,
                uint64_t begin, uint64_t end, std::byte* packed) {
  uint64_t at = 0;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const auto& a = arrays[i];
    const uint64_t elem = wire::array_element_bytes(a, scalar), col = static_cast<uint64_t>(a.rows) * elem;
    const uint64_t bytes = wire::array_bytes(a, scalar);
    const uint64_t lo = std::max(begin, at), hi = std::min(end, at + bytes);
    const auto* src = static_cast<const std::byte*>(refs[i].data);
    const uint64_t ld = static_cast<uint64_t>(refs[i].ld) * elem;
    for (uint64_t p = lo; p < hi;) {  // column by column (one copy where the array is contiguous)
      const uint64_t j = (p - at) / col, r = (p - at) % col;
      const bool contiguous = a.cols <= 1 || ld == col;
      const uint64_t n = contiguous ? hi - p : std::min(hi - p, col - r);
      std::memcpy(packed + p, contiguous ? src + (p - at) : src + j * ld + r, n);
      p += n;
    }
    at += bytes;
  }
}

// Whether output `i` can land straight in the application's array: contiguous there, and written
// whole (an output the routine sizes goes aside and is copied in up to its count).
bool lands_directly(const wire::LapackArray& a, const MatrixRef& m) {
  return (a.cols <= 1 || m.ld == a.rows) && a.count_from < 0;
}

// The end of a chunked or direct LAPACK call: a failed or malformed reply restores what the call
// may have overwritten and falls back; otherwise the outputs that landed aside (`direct[i]` false)
// are copied into the application's arrays. `times`: start, sent, answered.
template <class Restore>
bool finish_lapack(Runtime& rt, const wire::LapackCall& call, const wire::LapackLayout& l, const MatrixRef* outputs,
                   const std::vector<bool>& direct, const transport::Buffer& aside, const wire::Message& reply,
                   int64_t* info, std::array<uint64_t, 3> times, const FallBack& fall_back, Restore restore,
                   uint64_t sent) {
  auto* r = std::get_if<wire::LapackReply>(&reply);
  if (!r || !r->ok || r->payload_bytes != 0 || r->info < 0) {
    restore();
    return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
  }
  const std::vector<uint64_t> out_offsets = packed_offsets(l.outputs, call.scalar);
  for (size_t i = 0; i < l.outputs.size(); ++i)
    if (!direct[i] && wire::array_bytes(l.outputs[i], call.scalar) &&
        !unpack_lapack_output(l, i, aside.data() + out_offsets[i], call.scalar, outputs)) {
      restore();
      return fall_back("the server's reply counts more values than the call has room for");
    }
  *info = r->info;
  rt.remote_succeeded(times[0]);
  account(rt, wire::call_name(call), lapack_label(call), *r, {times[0], times[1], times[2], now_ns()}, sent,
          wire::reply_bytes(call), wire::flops(call));
  return true;
}

// A large LAPACK call, pipelined: the inputs travel in chunks, packed into a staging buffer a
// little ahead of the sends, and the outputs come back in pieces, each landing straight in the
// application's array where that is contiguous (else aside, copied in at the end). The staging
// buffer keeps the inputs: if the call fails after pieces of an array updated in place have
// landed, the array gets its values back from there for the local rerun.
bool chunked_lapack(Runtime& rt, Connection& conn, const wire::LapackCall& call, const wire::LapackLayout& l,
                    const MatrixRef* inputs, const MatrixRef* outputs, uint64_t chunk, int64_t* info, uint64_t t0,
                    const FallBack& fall_back, ResidentPlan resident, const std::function<ResidentPlan()>& plan) {
  const Settings& settings = rt.settings();
  const uint64_t sent = wire::request_bytes(call), reply_bytes = wire::reply_bytes(call);
  transport::Buffer staging = transport::Buffer::allocate(sent);
  const std::vector<uint64_t> out_offsets = packed_offsets(l.outputs, call.scalar);
  std::vector<bool> direct;
  bool any_aside = false;
  for (size_t i = 0; i < l.outputs.size(); ++i) {
    direct.push_back(lands_directly(l.outputs[i], outputs[i]));
    any_aside = any_aside || !direct.back();
  }
  transport::Buffer aside = any_aside ? transport::Buffer::allocate(reply_bytes) : transport::Buffer();
  // Threads of their own pack the chunks ahead of the sends, in their order (thread t the chunks
  // t, t + T, ...): packing on the thread that drives the transport would take turns with the
  // transfers instead of overlapping them, and one thread packs below a fast link's rate (numpy's
  // dgesv 16384 across 100 Gbit/s: 2.1-4.0 GB/s, the fresh staging's page faults included,
  // against the link's 11.6). No result can exist before all input was packed and sent.
  // Chunks the server fills from inputs it holds are neither sent nor packed, but for an input an
  // output is updated from in place: restore() reads it here (getrs on held factors: 512 MiB
  // packed before the last chunk could go, 0.06 s of each call).
  std::vector<bool> unpacked = wire::held_chunks(resident.inputs, wire::input_bytes(call), sent, chunk);
  const std::vector<uint64_t> in_offsets = packed_offsets(l.inputs, call.scalar);
  for (const auto& o : l.outputs) {
    if (o.from_input < 0) continue;
    const uint64_t begin = in_offsets[o.from_input], end = begin + wire::array_bytes(l.inputs[o.from_input], call.scalar);
    for (uint64_t k = begin / chunk; k < unpacked.size() && k * chunk < end; ++k) unpacked[k] = false;
  }
  const uint64_t count = unpacked.size();
  auto ready = std::make_unique<std::atomic<bool>[]>(count);  // chunk k packed (or left unpacked)
  std::atomic<uint64_t> packed{0};                            // how many are
  std::atomic<bool> stop{false};
  std::vector<std::thread> packers;
  const uint64_t threads = std::clamp<uint64_t>(count, 1, digest_threads(settings));
  auto join_packers = [&] {
    stop.store(true);
    for (std::thread& t : packers) t.join();
    packers.clear();
  };
  struct Joined {  // on every way out, exceptions too
    decltype(join_packers)& join;
    ~Joined() { join(); }
  } joined{join_packers};
  for (uint64_t t = 0; t < threads; ++t)
    packers.emplace_back([&, t] {
      for (uint64_t k = t; k < count && !stop.load(std::memory_order_relaxed); k += threads) {
        if (!unpacked[k]) pack_range(l.inputs, inputs, call.scalar, k * chunk, std::min(sent, (k + 1) * chunk), staging.data());
        ready[k].store(true, std::memory_order_release);
        packed.fetch_add(1, std::memory_order_acq_rel);
      }
    });
  auto all_packed = [&] { return packed.load(std::memory_order_acquire) == count; };
  auto land = [&](uint64_t offset, uint64_t bytes) -> std::byte* {
    if (!all_packed()) return nullptr;
    size_t i = l.outputs.size();
    while (i > 0 && out_offsets[i - 1] > offset) --i;  // the array the piece starts in
    if (i == 0) return nullptr;
    --i;
    const uint64_t within = offset - out_offsets[i];
    if (within + bytes > wire::array_bytes(l.outputs[i], call.scalar)) return nullptr;  // spans two arrays
    return direct[i] ? static_cast<std::byte*>(const_cast<void*>(outputs[i].data)) + within : aside.data() + offset;
  };
  auto restore = [&] {  // the arrays updated in place, as they were
    if (!all_packed()) return;  // nothing landed
    for (size_t i = 0; i < l.outputs.size(); ++i) {
      const auto& o = l.outputs[i];
      if (o.from_input >= 0 && direct[i])
        unpack_columns(staging.data() + in_offsets[o.from_input], o.rows, o.cols, wire::array_element_bytes(o, call.scalar),
                     outputs[i]);
    }
  };
  const uint64_t t1 = now_ns();
  wire::Message reply;
  try {
    for (bool again = true;; again = false) {
      // Chunks that lie in inputs the server holds are not sent (it fills them from its store).
      reply = conn.chunked_request(
          wire::LapackChunk{0, call, sent, chunk, 0, resident.inputs}, {{staging.data(), sent}}, land, reply_bytes,
          settings.timeout_seconds, static_cast<unsigned>(settings.chunk_window),
          [&](uint64_t begin, uint64_t) {  // the chunk about to be sent must be packed
            while (!ready[begin / chunk].load(std::memory_order_acquire)) sched_yield();
          });
      // The server no longer holds an input (nothing of the result has come): once more, sent.
      auto* r = std::get_if<wire::LapackReply>(&reply);
      if (!again || !r || r->ok || r->message != wire::kResidentMissing) break;
      conn.resident().forget(resident.inputs);
      resident = plan();
      // Sent now, the chunks left unpacked must be packed (the packers are done: the call was answered).
      join_packers();
      for (uint64_t k = 0; k < unpacked.size(); ++k)
        if (unpacked[k]) pack_range(l.inputs, inputs, call.scalar, k * chunk, std::min(sent, (k + 1) * chunk), staging.data());
    }
  } catch (const Error& e) {
    join_packers();
    restore();
    return fall_back(e.what());
  }
  join_packers();
  return finish_lapack(rt, call, l, outputs, direct, aside, reply, info, {t0, t1, now_ns()}, fall_back, restore,
                       sent - wire::held_chunk_bytes(resident.inputs, wire::input_bytes(call), sent, chunk));
}


// A large LAPACK call on the direct path: the server copies the inputs out of the application's
// arrays (or out of a packed copy, for an array that is not contiguous) and the outputs into
// them, over its copy lanes, in parallel; this thread registers the memory and waits. Outputs
// that overwrite inputs in place (A, B) are gated: the server writes none of them before their
// values are kept here (copy_threads threads, while the server fetches and computes), so a failed
// call still reruns locally on the original values.
bool direct_lapack(Runtime& rt, Connection& conn, const wire::LapackCall& call, const wire::LapackLayout& l,
                   const MatrixRef* inputs, const MatrixRef* outputs, int64_t* info, uint64_t t0,
                   const FallBack& fall_back) {
  const Settings& settings = rt.settings();
  const uint64_t sent = wire::request_bytes(call), reply_bytes = wire::reply_bytes(call);
  const std::vector<uint64_t> in_offsets = packed_offsets(l.inputs, call.scalar);
  const std::vector<uint64_t> out_offsets = packed_offsets(l.outputs, call.scalar);
  auto contiguous = [](const wire::LapackArray& a, const MatrixRef& m) { return a.cols <= 1 || m.ld == a.rows; };
  wire::DirectLapack d{0, call, {}, {}, {}, false};
  std::vector<transport::Registration> registrations;
  std::map<std::pair<const void*, uint64_t>, uint32_t> key_of;  // one registration per memory range
  auto key = [&](const void* data, uint64_t bytes) {
    auto [it, fresh] = key_of.try_emplace({data, bytes}, static_cast<uint32_t>(d.keys.size()));
    if (fresh) {
      registrations.push_back(conn.register_memory(const_cast<void*>(data), bytes));
      d.keys.push_back(registrations.back().key());
    }
    return it->second;
  };
  auto extent = [&](const void* data, uint64_t bytes, const void* region, uint64_t region_bytes) {
    return wire::Extent{reinterpret_cast<uint64_t>(data), bytes, key(region, region_bytes)};
  };
  transport::Buffer packed, aside, kept;
  for (size_t i = 0; i < l.inputs.size(); ++i) {
    const uint64_t bytes = wire::array_bytes(l.inputs[i], call.scalar);
    if (bytes == 0) continue;
    if (contiguous(l.inputs[i], inputs[i])) {
      d.input.push_back(extent(inputs[i].data, bytes, inputs[i].data, bytes));
      continue;
    }
    if (!packed.data()) packed = transport::Buffer::allocate(sent);
    pack_range(l.inputs, inputs, call.scalar, in_offsets[i], in_offsets[i] + bytes, packed.data());
    d.input.push_back(extent(packed.data() + in_offsets[i], bytes, packed.data(), sent));
  }
  std::vector<bool> direct;
  std::vector<size_t> in_place;  // outputs written straight over an input: kept before they are
  uint64_t kept_bytes = 0;
  for (size_t i = 0; i < l.outputs.size(); ++i) {
    const auto& o = l.outputs[i];
    const uint64_t bytes = wire::array_bytes(o, call.scalar);
    direct.push_back(lands_directly(o, outputs[i]));
    if (bytes == 0) continue;
    if (direct[i]) {
      d.output.push_back(extent(outputs[i].data, bytes, outputs[i].data, bytes));
      if (o.from_input >= 0) in_place.push_back(i), kept_bytes += bytes;
      continue;
    }
    if (!aside.data()) aside = transport::Buffer::allocate(reply_bytes);
    d.output.push_back(extent(aside.data() + out_offsets[i], bytes, aside.data(), reply_bytes));
  }
  d.gated = !in_place.empty();
  if (d.gated) kept = transport::Buffer::allocate(kept_bytes);
  auto keep = [&] {
    uint64_t at = 0;
    for (size_t i : in_place) {
      const uint64_t bytes = wire::array_bytes(l.outputs[i], call.scalar);
      parallel_copy(kept.data() + at, static_cast<const std::byte*>(outputs[i].data), bytes,
                    static_cast<unsigned>(settings.copy_threads));
      at += bytes;
    }
  };
  auto restore = [&] {
    uint64_t at = 0;
    for (size_t i : in_place) {
      const uint64_t bytes = wire::array_bytes(l.outputs[i], call.scalar);
      std::memcpy(const_cast<void*>(outputs[i].data), kept.data() + at, bytes);
      at += bytes;
    }
  };
  const uint64_t t1 = now_ns();
  bool proceeded = false;
  wire::Message reply;
  try {
    const bool gated = d.gated;
    reply = conn.direct_request(std::move(d), gated, keep, proceeded, settings.timeout_seconds);
  } catch (const Error& e) {
    if (proceeded) restore();
    return fall_back(e.what());
  }
  return finish_lapack(
      rt, call, l, outputs, direct, aside, reply, info, {t0, t1, now_ns()}, fall_back,
      [&] {
        if (proceeded) restore();
      },
      sent);
}

}  // namespace

bool offload_lapack(const wire::LapackCall& call, const MatrixRef* inputs, const MatrixRef* outputs,
                    int64_t* info) noexcept {
  std::string name;
  return guarded(name, [&] {
    Runtime& rt = runtime();
    name = wire::call_name(call);
    const Settings& settings = rt.settings();
    if (!rt.wants_remote({name, wire::flops(call), double(wire::request_bytes(call) + wire::reply_bytes(call))}))
      return rt.ran_locally(name);
    wire::validate(call);
    const wire::LapackLayout l = wire::layout(call);
    return on_servers(rt, name, [&](const std::shared_ptr<Connection>& conn, const FallBack& fall_back) {
      const uint64_t t0 = now_ns();
      const uint64_t chunk = static_cast<uint64_t>(settings.chunk_bytes);
      if (chunk && wire::request_bytes(call) >= 2 * chunk && settings.direct) {
        uint32_t lanes = 0;
        try {
          lanes = conn->direct_lanes(settings.timeout_seconds, settings.direct_cma);
        } catch (const Error& e) {
          return fall_back(e.what());
        }
        if (lanes) return direct_lapack(rt, *conn, call, l, inputs, outputs, info, t0, fall_back);
      }
      std::vector<transport::Buffer> scratch;
      std::vector<transport::Segment> packed;  // every input, packed where not contiguous
      for (size_t i = 0; i < l.inputs.size(); ++i) {
        const auto& a = l.inputs[i];
        packed.push_back(pack_columns(a.rows, a.cols, wire::array_element_bytes(a, call.scalar), inputs[i], scratch));
      }
      const uint64_t reply_bytes = wire::reply_bytes(call);
      // Inputs the server holds from earlier calls are not sent: a whole call leaves them out of
      // its payload, a chunked one the chunks that lie in them (the server fills those).
      const bool chunked = chunk && wire::request_bytes(call) >= 2 * chunk;
      std::function<ResidentPlan()> plan = [&] {
        return plan_resident(conn->resident(), settings, packed, -1, wire::request_bytes(call) + reply_bytes,
                             CallMemory{reply_bytes, chunked});
      };
      ResidentPlan resident = plan();
      if (chunked)
        return chunked_lapack(rt, *conn, call, l, inputs, outputs, chunk, info, t0, fall_back, std::move(resident), plan);
      // The results land aside and are copied in on success: a failed call leaves the arrays as
      // they were, for the local rerun.
      transport::Buffer result = transport::Buffer::allocate(std::max<uint64_t>(reply_bytes, 1));
      const uint64_t t1 = now_ns();
      wire::Message reply;
      auto* r = static_cast<wire::LapackReply*>(nullptr);
      try {
        for (bool again = true;; again = false) {
          std::vector<transport::Segment> payload;
          for (const transport::Segment& seg : resident.payload)
            if (seg.bytes) payload.push_back(seg);
          reply = conn->request(wire::LapackRequest{0, call, resident.payload_bytes, resident.inputs}, std::move(payload),
                                result.data(), reply_bytes, settings.timeout_seconds);
          r = std::get_if<wire::LapackReply>(&reply);
          // The server no longer holds an input (its other limits evicted it): once more, sent.
          if (!again || !r || r->ok || r->message != wire::kResidentMissing) break;
          conn->resident().forget(resident.inputs);
          resident = plan();
        }
      } catch (const Error& e) {
        return fall_back(e.what());
      }
      const uint64_t t2 = now_ns(), sent = resident.payload_bytes;
      if (!r || !r->ok || r->payload_bytes != reply_bytes || r->info < 0)
        return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
      // Counts are checked before anything is copied in: the arrays stay as they were for a rerun.
      const std::vector<uint64_t> out_offsets = packed_offsets(l.outputs, call.scalar);
      for (const auto& a : l.outputs) {
        if (a.count_from < 0) continue;
        int32_t count = 0;
        std::memcpy(&count, result.data() + out_offsets[static_cast<size_t>(a.count_from)], sizeof count);
        if (!count_fits(a, count)) return fall_back("the server's reply counts more values than the call has room for");
      }
      for (size_t i = 0; i < l.outputs.size(); ++i)
        unpack_lapack_output(l, i, result.data() + out_offsets[i], call.scalar, outputs);
      *info = r->info;
      rt.remote_succeeded(t0);
      const uint64_t t3 = now_ns();
      account(rt, name, lapack_label(call), *r, {t0, t1, t2, t3}, sent, reply_bytes, wire::flops(call));
      return true;
    });
  });
}

}  // namespace outboard::client
