// The Outboard daemon: accepts connections, authenticates them, and hands their messages to its
// services (services/service.hpp: one per API family), which run calls on the backends' executors.
// One progress thread owns the transport; calls run on a compute pool.
#pragma once
#include <atomic>
#include <memory>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "server/backend.hpp"
#include "server/config.hpp"

namespace outboard::server {

class Server {
 public:
  // Reads the secret now, so a bad token file fails at start, not at the first client.
  Server(Config config, std::vector<std::unique_ptr<Backend>> backends);
  ~Server();
  // Binds the listener; returns the port (useful with port 0).
  uint16_t start();
  // Serves until stop() is called (from any thread, or a signal handler).
  void run();
  // Async-signal-safe.
  void stop();
  // For tests that drive the server from their own thread instead of run() (the session fuzzer,
  // tests/fuzz/fuzz_session.cpp): one pass of run()'s work, without waiting or housekeeping.
  // Returns whether anything happened, or calls are still queued or running on the compute pool.
  bool poll();
  // Rereads the identities (SIGHUP); safe from a signal handler, as stop() is.
  void reload();
  // This server follows `count` others that ended because a GPU fault left their GPUs unusable
  // (tools/outboard/serve_restarts.hpp), the last for `reason`: status and metrics say so. Call
  // before start().
  void restarted(int count, const std::string& reason);
  // Called (once, on the progress thread) when the transport has stopped receiving for good
  // (transport.hpp, Worker::receiving); run() then returns. No client can be served by this
  // process any more: the caller starts the server again in a new one (tools/outboard/serve.cpp).
  // Without it the server logs the fault and runs on. Call before run().
  void on_transport_lost(std::function<void(const std::string& why)> lost);
  // This server is worker `index` of `count` (a process per GPU, tools/outboard/serve_restarts.hpp).
  // Call before start().
  void set_worker(unsigned index, unsigned count);
  // The other workers' ports (this one's own is left out), which every client is told when it
  // authenticates. Any thread.
  void set_siblings(std::vector<uint16_t> ports);
  // The status document `outboard status` prints.
  nlohmann::json status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace outboard::server
