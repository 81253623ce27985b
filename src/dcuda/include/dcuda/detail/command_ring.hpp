// The ring a rank posts remote commands into (device → proxy), both ends. One producer (the
// rank's thread 0) and one consumer (the proxy thread). Positions are monotonic 32-bit counts;
// slot = position % kRingSlots. The producer fills a slot and then stores seq = position + 1 with
// release; the consumer sees the slot as posted when seq equals its own position + 1 (a slot's
// old contents carry position + 1 - kRingSlots, and a fresh ring zeros, never a match). The
// consumer publishes ProxyCounters::consumed once it no longer reads a slot or its staging; the
// producer waits for room against it.
#pragma once
#include <stdint.h>

#include "dcuda/detail/layout.hpp"
#include "dcuda/detail/sync.hpp"

namespace dcuda::detail {

// Producer side. `tail` is the producer's next position (kept by the rank); `seen` the
// consumer's count as the producer last read it, read again only when the ring looks full: a
// stale count understates the room, never overstates it, and the read it came from already
// ordered the consumer's last use of those slots before their reuse. (On the GPU that read
// crosses PCIe: ~1 us on every post until this.) Start `seen` at tail - kRingSlots.
DCUDA_HD bool ring_has_room(const RankHost& r, uint32_t tail, uint32_t& seen) {
  if (tail - seen < kRingSlots) return true;
  seen = load_acquire<Scope::system>(&r.proxy.consumed);
  return tail - seen < kRingSlots;
}
DCUDA_HD Command& ring_slot(RankHost& r, uint32_t position) { return r.ring[position % kRingSlots]; }
DCUDA_HD unsigned char* ring_staging(RankHost& r, uint32_t position) { return r.staging[position % kRingSlots]; }
// Makes the filled slot of `position` visible to the consumer (after its fields and staging).
DCUDA_HD void ring_post(RankHost& r, uint32_t position) {
  store_release<Scope::system>(&ring_slot(r, position).seq, position + 1);
}

// Consumer side. `head` is the consumer's next position.
DCUDA_HD const Command* ring_peek(const RankHost& r, uint32_t head) {
  const Command& c = r.ring[head % kRingSlots];
  return load_acquire<Scope::system>(&c.seq) == head + 1 ? &c : nullptr;
}
// The consumer is done with every slot before `head` (their staging may be reused).
DCUDA_HD void ring_release(RankHost& r, uint32_t head) { store_release<Scope::system>(&r.proxy.consumed, head); }

}  // namespace dcuda::detail
