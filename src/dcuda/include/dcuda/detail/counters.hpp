// Notification counting. A rank's notifications of one tag are counted twice, by writer: its
// GPU's ranks bump one counter with atomics, the proxy writes the other (the network's). Both
// only grow, modulo 2^32; the rank keeps what it has consumed. Arrived = device + network -
// consumed, computed modulo 2^32 and read as a signed difference: right across wrap-around as
// long as fewer than 2^31 notifications are outstanding.
#pragma once
#include <stdint.h>

#include "dcuda/detail/sync.hpp"

namespace dcuda::detail {

// Notifications of a tag that arrived and are not consumed yet.
DCUDA_HD uint32_t waiting(uint32_t device_count, uint32_t network_count, uint32_t consumed) {
  const int32_t d = static_cast<int32_t>(device_count + network_count - consumed);
  return d > 0 ? static_cast<uint32_t>(d) : 0u;
}

// a has reached b (both monotonic counts modulo 2^32, less than 2^31 apart).
DCUDA_HD bool reached(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }

// test: consumes `count` notifications when that many are there, else nothing.
DCUDA_HD bool take(uint32_t device_count, uint32_t network_count, uint32_t& consumed, uint32_t count) {
  if (waiting(device_count, network_count, consumed) < count) return false;
  consumed += count;
  return true;
}

}  // namespace dcuda::detail
