// The server's Prometheus metrics (GET /metrics, text format 0.0.4): calls, errors, bytes and call
// durations per service and client identity, open sessions. The progress thread records into
// state only it touches and, from housekeeping, publishes an immutable copy; the HTTP thread
// (libmicrohttpd's) renders only published copies. So a scrape never reads the server's sessions,
// and the progress thread never waits for HTTP (it holds a mutex only to swap a pointer).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/session.hpp"
#include "wire/messages.hpp"

namespace outboard::server {

// The `identity` label of a session's metrics: today the client name its Hello carried.
std::string metrics_identity(const Session& s);

// A GPU's service state, for outboard_gpu_* (its index among the server's GPUs).
struct DeviceHealth {
  int device = 0;
  bool in_service = true;
  uint64_t faults = 0, recoveries = 0;
  bool operator==(const DeviceHealth&) const = default;
};

// What the transport holds per connection (transport::Worker::tables), for outboard_transport_*:
// flat over a server's life where nothing is kept per connection once it is gone (issue 33).
struct ConnectionTables {
  uint64_t peers = 0, retiring = 0, closes_in_flight = 0;
  bool operator==(const ConnectionTables&) const = default;
};

class Metrics {
 public:
  Metrics();
  ~Metrics();  // stops the HTTP server
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Serves GET /metrics on host:port; port 0 leaves metrics off (every hook then returns at once).
  // Throws Error saying why when it cannot listen (address in use, bad host).
  void serve(const std::string& host, uint16_t port);

  // ---- hooks, all on the progress thread ----

  // An authenticated session's message for `service` (a Service::name()): its payload, and the
  // start of the call it begins (timed until call_counted or, for OpenCL, its ClReply).
  void request(const Session& s, const char* service, const wire::Message& m);
  // Core::count_call: the call ended. `s` is null when its session is gone. The session's chunked
  // or direct call of that id, if any, is still in s->chunked (its bytes are counted here).
  void call_counted(const Session* s, uint64_t call_id, bool ok);
  // A message sent to an open session through the core's completions, with `bytes` of payload.
  void replied(const Session& s, const wire::Message& reply, uint64_t bytes);
  void session_ended(const Session& s);
  // Publishes what was recorded, with the open sessions and the server's totals (cheap when
  // nothing changed). Call every housekeeping round.
  void publish(const std::unordered_map<PeerId, Session>& sessions, uint64_t connections, uint64_t refused_auth,
               const std::vector<DeviceHealth>& devices = {}, const ConnectionTables& tables = {});

  // Servers before this one that ended for a GPU fault (outboard_server_restarts_total). Before serve().
  void set_restarts(uint64_t count);

  // The text a scrape gets now (from any thread).
  std::string render() const;

  struct Impl;  // metrics.cpp

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace outboard::server
