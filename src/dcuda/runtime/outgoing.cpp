#include "dcuda/runtime/outgoing.hpp"

#include <new>

#include "common/error.hpp"
#include "dcuda/detail/command_ring.hpp"
#include "dcuda/detail/counters.hpp"

namespace dcuda::runtime::proxy_detail {

using detail::Op;
using outboard::ProtocolError;

Outgoing::Outgoing(Context& c) : c_(c), ranks_(c.ranks()) {
  for (uint32_t r = 0; r < ranks_.size(); ++r) {
    Rank& k = ranks_[r];
    // Where an earlier run (or a test starting near 2^32) left the ring.
    k.head = k.next_send = k.consumed = detail::load_acquire(&c_.host[r].proxy.consumed);
    k.completed = detail::load_acquire(&c_.host[r].proxy.completed);
    k.next_seq.assign(c_.processes(), 0);
    k.awaiting.resize(c_.processes());
  }
}

bool Outgoing::poll() {
  bool any = false;
  for (uint32_t r = 0; r < ranks_.size(); ++r) {
    any |= read_ring(r);
    any |= send_ready(r);
    any |= publish(r);
  }
  return any;
}

bool Outgoing::read_ring(uint32_t r) {
  Rank& k = ranks_[r];
  bool any = false;
  while (k.ops.size() < kMaxInFlight) {
    const detail::Command* posted = detail::ring_peek(c_.host[r], k.head);
    if (!posted) break;
    const detail::Command cmd = *posted;  // the slot itself is not read again (its staging may be)
    const bool copies_out = (cmd.op == uint32_t(Op::put) || cmd.op == uint32_t(Op::put_notify)) && !cmd.staged;
    if (copies_out && buffered_ > 0 && buffered_ + cmd.bytes > kMaxBufferedBytes) break;  // after what is held
    Item& o = k.ops.emplace_back();
    o.cmd = cmd;
    o.seen = c_.trace.start();
    start(r, k.head++, o);
    any = true;
  }
  return any;
}

void Outgoing::refuse_locally(Item& o, const std::string& why) {
  c_.fail(why);
  o.ready = true;  // nothing to send: the send pass steps over it
}

void Outgoing::start(uint32_t r, uint32_t position, Item& o) {
  const detail::Command& cmd = o.cmd;
  const uint32_t me = c_.first_rank() + r;
  const std::string who = "rank " + std::to_string(me);
  switch (static_cast<Op>(cmd.op)) {
    case Op::barrier:
      o.ready = true;
      if (on_barrier) on_barrier(r, cmd.generation);
      return;
    case Op::put:
    case Op::notify:
    case Op::put_notify:
      break;
    default:
      return refuse_locally(o, who + " posted a command of unknown op " + std::to_string(cmd.op));
  }
  const uint32_t p = c_.world.process_of(cmd.target);
  if (p == c_.processes())
    return refuse_locally(o, who + " sent to rank " + std::to_string(cmd.target) + ", which is not in the run (" +
                                 std::to_string(c_.world.world_size()) + " ranks)");
  if (p == c_.self())
    return refuse_locally(o, who + " sent to rank " + std::to_string(cmd.target) +
                                 " through the proxy, but that rank is on its own GPU (the device delivers those)");
  if (c_.peers[p].out_lost) return refuse_locally(o, who + " sent to rank " + std::to_string(cmd.target) + " of " +
                                                         c_.rank_range(p) + ", which is gone");
  const bool has_data = cmd.op != uint32_t(Op::notify) && cmd.bytes > 0;
  if (has_data && cmd.staged && cmd.bytes > detail::kInlineBytes)
    return refuse_locally(o, who + " staged " + std::to_string(cmd.bytes) + " bytes; a staging slot holds " +
                                 std::to_string(detail::kInlineBytes));
  o.process = p;
  o.sends = true;
  o.delivered = false;
  ++undelivered_;
  if (!has_data || cmd.staged) {
    o.ready = true;
    o.staging_free = o.source_free = !has_data;  // staging is read until the send is done
    return;
  }
  try {
    o.data = tp::Buffer::allocate(cmd.bytes, c_.link->host_allocator());
  } catch (const std::bad_alloc&) {
    mark_delivered(o);
    o.sends = false;
    return refuse_locally(o, who + ": no host memory for a put of " + std::to_string(cmd.bytes) + " bytes");
  }
  buffered_ += cmd.bytes;
  o.source_free = false;
  c_.link->copy_out(o.data.data(), reinterpret_cast<const void*>(cmd.source), cmd.bytes, [this, r, position] {
    Item& done = item(ranks_[r], position);
    done.ready = done.source_free = true;
  });
}

bool Outgoing::send_ready(uint32_t r) {
  Rank& k = ranks_[r];
  bool any = false;
  while (k.next_send != k.head) {
    const uint32_t position = k.next_send;
    Item& o = item(k, position);
    if (!o.ready) break;  // later commands wait: the rank's order is kept
    const uint32_t p = o.process;
    if (o.sends && !c_.peers[p].out_ready && !c_.peers[p].out_lost) break;  // not welcomed yet (Proxy::start)
    ++k.next_send;
    if (!o.sends) continue;
    if (c_.peers[p].out_lost) {  // lost while the payload was copied out
      mark_delivered(o);
      c_.fail("rank " + std::to_string(c_.first_rank() + r) + " sent to " + c_.rank_range(p) + ", which is gone");
      continue;
    }
    const detail::Command& cmd = o.cmd;
    const uint64_t bytes = cmd.op == uint32_t(Op::notify) ? 0 : cmd.bytes;
    const msg::Put m{cmd.op, c_.first_rank() + r, cmd.target, k.next_seq[p]++, cmd.window, cmd.tag, cmd.offset, bytes};
    const void* payload = cmd.staged ? static_cast<const void*>(detail::ring_staging(c_.host[r], position)) : o.data.data();
    k.awaiting[p].emplace_back(m.seq, position);
    o.sent = true;
    o.send_done = false;
    ++sent_;
    c_.trace.record(ProxyTrace::ring_to_send, o.seen);
    const uint64_t send_started = c_.trace.start();
    c_.send(c_.peers[p].out, m, payload, bytes, [this, r, position](bool ok) {
      Item& done = item(ranks_[r], position);
      done.send_done = done.staging_free = done.source_free = true;
      if (!done.data.data()) return;
      buffered_ -= done.data.size();
      done.data = tp::Buffer();
      // A failed send means a failed connection: its on_disconnect fails what awaits answers.
      (void)ok;
    });
    c_.trace.record(ProxyTrace::send_call, send_started);
    any = true;
  }
  return any;
}

bool Outgoing::publish(uint32_t r) {
  Rank& k = ranks_[r];
  uint32_t consumed = front(k);
  uint32_t completed = consumed;
  bool consuming = true, completing = true;
  for (const Item& o : k.ops) {
    consuming = consuming && o.staging_free;
    completing = completing && o.source_free;
    consumed += consuming;
    completed += completing;
    if (!consuming && !completing) break;
  }
  bool any = false;
  if (consumed != k.consumed) detail::ring_release(c_.host[r], k.consumed = consumed), any = true;
  if (completed != k.completed) detail::store_release(&c_.host[r].proxy.completed, k.completed = completed), any = true;
  // Finished commands leave the front; the others (and their positions) stay.
  while (!k.ops.empty()) {
    const Item& o = k.ops.front();
    if (!(o.staging_free && o.source_free && o.delivered && o.send_done) || k.next_send == front(k)) break;
    k.ops.pop_front();
  }
  return any;
}

void Outgoing::mark_delivered(Item& o) {
  if (o.delivered) return;
  o.delivered = true;
  --undelivered_;
}

Outgoing::Rank& Outgoing::rank_of_answer(uint32_t p, uint32_t source) {
  const uint32_t r = c_.local_index(source);
  if (r == c_.ranks()) throw ProtocolError("an answer for rank " + std::to_string(source) + ", which is not ours");
  return ranks_[r];
}

void Outgoing::on_ack(uint32_t p, const msg::Ack& a) {
  Rank& k = rank_of_answer(p, a.source);
  auto& waiting = k.awaiting[p];
  if (!waiting.empty() && !detail::reached(waiting.back().first, a.seq))
    throw ProtocolError("an acknowledgement of command " + std::to_string(a.seq) + " of rank " +
                        std::to_string(a.source) + ", which was not sent");
  while (!waiting.empty() && detail::reached(a.seq, waiting.front().first)) {
    mark_delivered(item(k, waiting.front().second));
    waiting.pop_front();
  }
}

void Outgoing::on_refused(uint32_t p, const msg::Refused& f) {
  Rank& k = rank_of_answer(p, f.source);
  const auto& waiting = k.awaiting[p];
  if (waiting.empty() || !detail::reached(f.seq, waiting.front().first) || !detail::reached(waiting.back().first, f.seq))
    throw ProtocolError("a refusal of command " + std::to_string(f.seq) + " of rank " + std::to_string(f.source) +
                        ", which awaits no answer");
  // The command stays awaiting: the cumulative acknowledgement that follows covers it.
  c_.fail(c_.rank_range(p) + " refused a command of rank " + std::to_string(f.source) + ": " + f.reason);
}

size_t Outgoing::on_peer_lost(uint32_t p) {
  size_t failed = 0;
  for (Rank& k : ranks_) {
    for (auto [seq, position] : k.awaiting[p]) mark_delivered(item(k, position)), ++failed;
    k.awaiting[p].clear();
  }
  return failed;
}

bool Outgoing::all_delivered() const {
  if (undelivered_) return false;
  for (uint32_t r = 0; r < ranks_.size(); ++r)
    if (detail::ring_peek(c_.host[r], ranks_[r].head)) return false;
  return true;
}

bool Outgoing::drained() const {
  if (!all_delivered()) return false;
  for (const Rank& k : ranks_)
    if (!k.ops.empty()) return false;
  return true;
}

}  // namespace dcuda::runtime::proxy_detail
