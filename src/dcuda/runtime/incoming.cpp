#include "dcuda/runtime/incoming.hpp"

#include <memory>
#include <new>

#include "common/error.hpp"
#include "dcuda/detail/sync.hpp"

namespace dcuda::runtime::proxy_detail {

using detail::Op;
using outboard::ProtocolError;

Incoming::Incoming(Context& c) : c_(c), streams_(c.processes()), shadow_(c.ranks()) {
  for (uint32_t r = 0; r < c_.ranks(); ++r) {
    shadow_[r].assign(detail::kTags, 0);
    bool done = false;
    c_.link->copy_out(shadow_[r].data(), c_.device[r].network_notes, sizeof(uint32_t) * detail::kTags,
                      [&done] { done = true; });
    while (!done) c_.link->poll();
  }
}

void Incoming::open(uint32_t p) { streams_[p] = std::vector<Stream>(c_.world.processes[p].ranks); }

// Reads one entry of a rank's window mirror: the device writes it, so each field once, atomically.
static detail::WindowEntry read_window(const detail::WindowEntry& w) {
  return {__atomic_load_n(&w.base, __ATOMIC_ACQUIRE), __atomic_load_n(&w.bytes, __ATOMIC_ACQUIRE)};
}

std::string Incoming::check(const msg::Put& m, uint64_t payload_bytes) const {
  const uint32_t r = c_.local_index(m.target);
  if (r == c_.ranks()) return "rank " + std::to_string(m.target) + " is not a rank of " + c_.rank_range(c_.self());
  const bool notifies = m.op == uint32_t(Op::notify) || m.op == uint32_t(Op::put_notify);
  if (!notifies && m.op != uint32_t(Op::put)) return "unknown op " + std::to_string(m.op);
  if (payload_bytes != m.bytes)
    return "a payload of " + std::to_string(payload_bytes) + " bytes for a command of " + std::to_string(m.bytes);
  if (notifies && m.tag >= detail::kTags)
    return "tag " + std::to_string(m.tag) + " out of range (0.." + std::to_string(detail::kTags - 1) + ")";
  if (m.op == uint32_t(Op::notify)) return m.bytes == 0 ? "" : "a notify with a payload";
  if (m.window >= detail::kMaxWindows)
    return "window " + std::to_string(m.window) + " out of range (0.." + std::to_string(detail::kMaxWindows - 1) + ")";
  const detail::WindowEntry w = read_window(c_.host[r].windows[m.window]);
  const std::string which = "window " + std::to_string(m.window) + " of rank " + std::to_string(m.target);
  if (w.bytes == 0) return which + " is not registered";
  if (w.base + w.bytes < w.base) return which + " has an impossible extent";
  if (m.offset > w.bytes || m.bytes > w.bytes - m.offset)
    return "bytes " + std::to_string(m.offset) + " + " + std::to_string(m.bytes) + " past the end of " + which + " (" +
           std::to_string(w.bytes) + " bytes)";
  return "";
}

tp::Landing Incoming::landing(std::span<const std::byte> header, uint64_t bytes) {
  msg::Message m;
  try {
    m = msg::decode(header);
  } catch (const ProtocolError&) {
    return tp::Landing::refuse();  // on_message says why
  }
  const auto* put = std::get_if<msg::Put>(&m);
  if (!put || !check(*put, bytes).empty()) return tp::Landing::refuse();
  try {
    return tp::Landing::receive(tp::Buffer::allocate(bytes, c_.link->host_allocator()));
  } catch (const std::bad_alloc&) {
    return tp::Landing::refuse();
  }
}

void Incoming::on_put(uint32_t p, const msg::Put& m, tp::Buffer payload, bool payload_refused) {
  const ProcessInfo& from = c_.world.processes[p];
  if (m.source < from.first_rank || m.source - from.first_rank >= from.ranks)
    throw ProtocolError("a command from rank " + std::to_string(m.source) + ", which is not a rank of " + c_.rank_range(p));
  Stream& s = streams_[p][m.source - from.first_rank];
  if (m.seq - s.next >= kMaxAhead || s.early.count(m.seq))
    throw ProtocolError("command " + std::to_string(m.seq) + " of rank " + std::to_string(m.source) +
                        " out of sequence (expected " + std::to_string(s.next) + ")");
  Entry e{m, std::move(payload), {}, c_.trace.start()};
  e.refusal = check(m, payload_refused ? m.bytes : e.data.size());
  if (payload_refused && e.refusal.empty()) e.refusal = "no host memory for its payload";
  if (m.seq != s.next) {
    s.early.emplace(m.seq, std::move(e));
    return;
  }
  apply(p, e);
  ++s.next;
  for (auto it = s.early.find(s.next); it != s.early.end(); it = s.early.find(s.next)) {
    apply(p, it->second);
    s.early.erase(it);
    ++s.next;
  }
  if (!s.moved) s.moved = true, moved_.push_back(p);
}

void Incoming::apply(uint32_t p, Entry& e) {
  const msg::Put& m = e.put;
  if (e.refusal.empty()) e.refusal = check(m, e.data.size());  // the window may have gone meanwhile
  if (!e.refusal.empty()) {
    ++refused_;
    if (!c_.peers[p].in_lost) c_.send(c_.peers[p].in, msg::Refused{m.source, m.seq, e.refusal});
    c_.fail("refused a command of rank " + std::to_string(m.source) + " from " + c_.rank_range(p) + ": " + e.refusal);
    return;
  }
  const uint32_t r = c_.local_index(m.target);
  const bool notifies = m.op != uint32_t(Op::put);
  uint32_t* counter = notifies ? &c_.device[r].network_notes[m.tag] : nullptr;
  ProxyTrace& trace = c_.trace;
  void* dst = nullptr;
  if (m.bytes) dst = reinterpret_cast<void*>(read_window(c_.host[r].windows[m.window]).base + m.offset);
  if (m.bytes && c_.link->small_write_fits(dst, m.bytes)) {
    // Data and counter in one call, on the same stream as everything else of this target (the
    // order is kept); the bytes are taken now, so the payload's buffer goes with the entry.
    const uint64_t t = trace.start();
    c_.link->write_small(dst, e.data.data(), m.bytes, counter, notifies ? ++shadow_[r][m.tag] : 0);
    trace.record(ProxyTrace::write_small, t);
  } else {
    std::shared_ptr<tp::Buffer> data;
    if (m.bytes) {
      data = std::make_shared<tp::Buffer>(std::move(e.data));  // kept until the link has read it
      // With a notification behind it, the buffer is released after the counter's write (below):
      // one completion to track instead of two, and none between the copy and the write.
      const uint64_t t = trace.start();
      c_.link->copy_in(dst, data->data(), m.bytes, notifies ? std::function<void()>() : [data] {});
      trace.record(ProxyTrace::copy_in, t);
    }
    if (notifies) {
      uint64_t t = trace.start();
      c_.link->write_u32(counter, ++shadow_[r][m.tag]);
      trace.record(ProxyTrace::write_u32, t);
      if (data) {
        t = trace.start();
        c_.link->fence([data] {});
        trace.record(ProxyTrace::fence, t);
      }
    }
  }
  trace.record(ProxyTrace::arrival_to_applied, e.arrived);
  ++applied_;
}

void Incoming::flush_acks() {
  for (uint32_t p : moved_) {
    const ProcessInfo& from = c_.world.processes[p];
    for (uint32_t i = 0; i < streams_[p].size(); ++i) {
      Stream& s = streams_[p][i];
      if (!s.moved) continue;
      s.moved = false;
      if (!c_.peers[p].in_lost) c_.send(c_.peers[p].in, msg::Ack{from.first_rank + i, s.next - 1});
    }
  }
  moved_.clear();
}

}  // namespace dcuda::runtime::proxy_detail
