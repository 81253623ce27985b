// What the parts of the host proxy (outgoing.cpp, incoming.cpp, world_barrier.cpp, proxy.cpp)
// share: the run, the local ranks' memory, the device link, the connections to the other
// processes, sending, and the first error. Private to the proxy; one thread (the proxy's) uses
// it, except error() and the counters, which the host runtime and tests read from any thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "dcuda/detail/layout.hpp"
#include "dcuda/runtime/device_link.hpp"
#include "dcuda/runtime/proxy_trace.hpp"
#include "dcuda/runtime/world.hpp"
#include "transport/transport.hpp"
#include "wire/dcuda.hpp"

namespace dcuda::runtime::proxy_detail {

namespace tp = outboard::transport;
namespace msg = outboard::wire::dcuda;

// The proxy's view of another process.
struct Peer {
  tp::PeerId out = 0;      // our connection to it: our commands, its answers
  bool out_ready = false;  // it welcomed our hello: only then may more follow (see Proxy::start)
  tp::PeerId in = 0;       // its connection to us, once its hello was accepted
  bool out_lost = false;   // our connection failed (or was closed for a protocol violation)
  bool in_lost = false;
  bool finished = false;   // it said its kernel ended and all its commands are delivered
  bool took_finish = false;  // it answered our `finished` (so it will not miss it when we close)
};

class Context {
 public:
  tp::Worker* worker = nullptr;
  DeviceLink* link = nullptr;
  World world;
  detail::RankHost* host = nullptr;      // our ranks' host region (host pointers)
  detail::RankDevice* device = nullptr;  // our ranks' device region (device addresses: never dereferenced)
  std::vector<Peer> peers;               // by process index (ours unused)
  // The path without the proxies (peer_windows.hpp): per process, of this host (we tell it our
  // windows), and whether we mapped its ranks' state (its windows go into peer_windows).
  std::vector<uint8_t> same_host, mapped;
  detail::WindowEntry* peer_windows = nullptr;  // [world rank * kMaxWindows + window], host memory our ranks read
  ProxyTrace trace;  // DCUDA_PROXY_TRACE (proxy_trace.hpp)

  uint32_t self() const { return world.self; }
  uint32_t processes() const { return static_cast<uint32_t>(world.processes.size()); }
  uint32_t first_rank() const { return world.processes[world.self].first_rank; }
  uint32_t ranks() const { return world.processes[world.self].ranks; }
  // Our index of world rank r, or ranks() when r is not ours.
  uint32_t local_index(uint32_t r) const {
    return r >= first_rank() && r - first_rank() < ranks() ? r - first_rank() : ranks();
  }
  std::string rank_range(uint32_t process) const;  // "ranks 4..7" of a process, for messages
  // Every other process has welcomed us or is gone.
  bool all_ready() const {
    for (uint32_t p = 0; p < peers.size(); ++p)
      if (p != self() && !peers[p].out_ready && !peers[p].out_lost) return false;
    return true;
  }

  void send(tp::PeerId to, const msg::Message& m, const void* payload = nullptr, size_t bytes = 0,
            std::function<void(bool ok)> done = {});

  // Records a failure: the first one is the run's error; every local rank is marked failed so its
  // waits can give up.
  void fail(const std::string& what);
  std::string error() const;
  uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

 private:
  std::vector<std::byte> header_;  // encoding scratch
  mutable std::mutex error_mutex_;
  std::string first_error_;
  std::atomic<uint64_t> failures_{0};
};

}  // namespace dcuda::runtime::proxy_detail
