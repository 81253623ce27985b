// dcuda host proxy and bootstrap, part 1: the proxy.
//
// A dcuda process runs one kernel whose blocks are ranks. A rank reaches ranks of its own GPU
// itself; for a rank of another process it posts a command (put, notify, put_notify, barrier)
// into its ring in page-locked host memory (detail/layout.hpp, detail/command_ring.hpp). The
// proxy is the host thread that serves those rings:
//
//   source process                                      target process
//   ring -> Outgoing: copy_out (unless staged) -> send  -> Incoming: check, land in host memory,
//          consumed / completed published in ring order     apply in stream order: copy_in, then
//          <- ack (cumulative per stream) / refused  <-     write_u32(network_notes[tag]), answer
//
// Acknowledgement: a target answers once it has *issued* a command to its device link (the link
// orders every later copy and write behind it) or refused it. So "delivered" at the source means
// "applied, in order"; the world barrier adds a fence on each target's link before releasing
// its ranks, which makes every put before the barrier visible (world_barrier.hpp).
//
// Connections: each process connects to every other one (its outgoing connection: its commands,
// barrier arrivals, and the answers to them) and opens it with a hello carrying the key the
// target published through the bootstrap; an incoming connection that does not present it is
// closed. Nothing else is sent on a connection before the target's welcome has come back (UCX
// may lose sends queued while a new endpoint is still being wired up). Everything a peer sends is checked (incoming.hpp); a violation of the protocol closes
// that connection, a bad command is refused with a reason. Either is recorded: the proxy keeps
// its first error (error()), which the host runtime returns from dcuda_host_run, and marks every
// local rank failed (ProxyCounters::failed) so their waits can give up.
//
// Shutdown: stop() once the kernel has ended. The proxy sends what is still in the rings, waits
// for every answer, tells the others it is finished, and keeps serving them until each of them
// has said the same and has answered ours (or is gone, an error unless it had finished); only
// then does it close, so no peer sees it vanish before its `finished`. Then its thread ends. A peer that stays silent longer than the stop timeout is an error, not a hang.
//
// Configuration (environment): DCUDA_PROXY_HOST (interface to listen on and publish, default
// 127.0.0.1), DCUDA_PROXY_PORT (default 0: any), DCUDA_PROXY_STOP_TIMEOUT (seconds, default 60),
// DCUDA_PROXY_TRACE=1 (time each stage of a command in the proxy, a summary to stderr at the
// end: proxy_trace.hpp), DCUDA_PROXY_SMALL_WRITES=0 (small payloads copied like the others, not
// written as values: device_link.hpp, to compare).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dcuda/detail/layout.hpp"
#include "dcuda/runtime/device_link.hpp"
#include "dcuda/runtime/world.hpp"

namespace dcuda::runtime {

// The path without the proxies between processes of one host (peer_windows.hpp).
struct PeerPaths {
  std::vector<bool> same_host;  // per process: of this host (we send it our windows)
  std::vector<bool> mapped;     // per process: we mapped its ranks' state (our ranks reach it directly)
  detail::WindowEntry* windows = nullptr;  // where its windows go: [world rank * kMaxWindows + window]
};

class Proxy {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 0;
    double stop_timeout_s = 60;
    // The defaults, overridden by the environment (see above). Throws on malformed values.
    static Options from_env();
  };
  struct Stats {
    uint64_t sent = 0;      // commands sent to other processes
    uint64_t applied = 0;   // commands of other processes applied to our ranks
    uint64_t refused = 0;   // commands of other processes refused
    uint64_t failures = 0;  // errors recorded (the first is error())
    uint64_t turned_away = 0;  // connections without a valid hello (not errors of the run)
  };

  // Listens at once (so address() can be published); serves nothing before start().
  explicit Proxy(Options options = Options::from_env());
  ~Proxy();  // stop()s if still running
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  std::string address() const;  // "host:port"
  std::string key() const;      // what peers must present: publish it with the address

  // Serves this process's ranks: host[i] / device[i] for i < world.processes[world.self].ranks
  // (device addresses are only handed to `link`). Connects to every other process.
  void start(const World& world, detail::RankHost* host, detail::RankDevice* device, DeviceLink& link,
             const PeerPaths& paths = PeerPaths{});
  // After the kernel ended: drains, finishes with the others, closes, joins (see above).
  void stop();
  // While a kernel of ours runs, the proxy polls its rings without ever sleeping (one core; the
  // ranks' one-way latency depends on it); otherwise it sleeps between looks once idle.
  void set_busy(bool busy);

  std::string error() const;  // the first error, or empty
  bool failed() const { return !error().empty(); }
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dcuda::runtime
