// Drives a client's and a server's transport::Worker until `done` holds, for tests that run both
// in one thread; false after `seconds` without it.
#pragma once
#include <cstdint>

#include "common/clock.hpp"
#include "transport/transport.hpp"

namespace outboard {

template <class Pred>
bool progress_until(transport::Worker& client, transport::Worker& server, Pred done, double seconds = 20) {
  const uint64_t end = now_ns() + static_cast<uint64_t>(seconds * 1e9);
  while (!done()) {
    if (now_ns() > end) return false;
    client.progress();
    server.progress();
  }
  return true;
}

}  // namespace outboard
