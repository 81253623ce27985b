// How busy a server is, as every answer to a call carries it (and the handshake's result, and a
// pong): a client with several servers sends its next call where the load is least.
#pragma once
#include <cstdint>

#include "wire/codec.hpp"

namespace outboard::wire {

struct ServerLoad {
  uint32_t calls = 0;              // calls queued or running on the server, of every session
  uint32_t sessions = 0;           // authenticated sessions
  uint64_t free_device_bytes = 0;  // device memory free on its GPUs together (0: none, or unknown)
  bool operator==(const ServerLoad&) const = default;
};

inline void put_load(Writer& w, const ServerLoad& l) {
  w.u32(l.calls);
  w.u32(l.sessions);
  w.u64(l.free_device_bytes);
}
inline ServerLoad get_load(Reader& r) {
  ServerLoad l;
  l.calls = r.u32();
  l.sessions = r.u32();
  l.free_device_bytes = r.u64();
  return l;
}

}  // namespace outboard::wire
