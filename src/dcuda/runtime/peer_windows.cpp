#include "dcuda/runtime/peer_windows.hpp"

#include "common/error.hpp"
#include "dcuda/detail/sync.hpp"

namespace dcuda::runtime::proxy_detail {

using outboard::ProtocolError;

PeerWindows::PeerWindows(Context& c)
    : c_(c), exported_(static_cast<size_t>(c.ranks()) * detail::kMaxWindows, detail::WindowEntry{0, 0}),
      sent_(c.processes(), 0), received_(c.processes(), 0) {}

const std::vector<uint32_t>& PeerWindows::export_changes() {
  bool any_peer = false;
  for (uint32_t p = 0; p < c_.processes(); ++p) any_peer |= p != c_.self() && c_.same_host[p];
  if (!any_peer) return sent_;
  for (uint32_t r = 0; r < c_.ranks(); ++r)
    for (uint32_t w = 0; w < detail::kMaxWindows; ++w) {
      const detail::WindowEntry& mirror = c_.host[r].windows[w];
      const detail::WindowEntry now{detail::load_acquire_u64(&mirror.base), detail::load_acquire_u64(&mirror.bytes)};
      detail::WindowEntry& was = exported_[static_cast<size_t>(r) * detail::kMaxWindows + w];
      if (now.base == was.base && now.bytes == was.bytes) continue;
      was = now;
      msg::Window m;
      m.rank = c_.first_rank() + r, m.window = w;
      SharedMemory shared;
      if (now.bytes && c_.link->share(reinterpret_cast<const void*>(now.base), shared) &&
          now.base >= shared.base && now.base - shared.base <= shared.bytes && now.bytes <= shared.bytes - (now.base - shared.base)) {
        m.offset = now.base - shared.base, m.bytes = now.bytes, m.allocation_bytes = shared.bytes, m.handle = shared.handle;
      }  // else bytes 0: gone, or not shareable (a put to it from a peer is then refused there)
      for (uint32_t p = 0; p < c_.processes(); ++p)
        if (p != c_.self() && c_.same_host[p] && !c_.peers[p].out_lost) c_.send(c_.peers[p].out, m), ++sent_[p];
    }
  return sent_;
}

void PeerWindows::on_window(uint32_t p, const msg::Window& m) {
  const ProcessInfo& from = c_.world.processes[p];
  if (!c_.same_host[p]) throw ProtocolError("a window from a process of another host");
  if (m.rank - from.first_rank >= from.ranks || m.rank < from.first_rank)
    throw ProtocolError("a window of rank " + std::to_string(m.rank) + ", which is not one of " + c_.rank_range(p));
  if (m.window >= detail::kMaxWindows) throw ProtocolError("window id " + std::to_string(m.window) + " out of range");
  if (m.offset > m.allocation_bytes || m.bytes > m.allocation_bytes - m.offset)
    throw ProtocolError("a window past the end of its allocation");
  ++received_[p];
  if (!c_.mapped[p] || !c_.peer_windows) return;  // its ranks are reached through the proxies
  detail::WindowEntry& e = c_.peer_windows[static_cast<size_t>(m.rank) * detail::kMaxWindows + m.window];
  if (!m.bytes) {
    detail::store_release_u64(&e.bytes, 0);
    return;
  }
  SharedMemory shared;
  shared.bytes = m.allocation_bytes, shared.handle = m.handle;
  uint8_t* base = static_cast<uint8_t*>(c_.link->map_shared(shared));  // throws: the run's error
  detail::store_release_u64(&e.bytes, 0);  // never a new base with an old size
  detail::store_release_u64(&e.base, reinterpret_cast<uint64_t>(base + m.offset));
  detail::store_release_u64(&e.bytes, m.bytes);
}

}  // namespace dcuda::runtime::proxy_detail
