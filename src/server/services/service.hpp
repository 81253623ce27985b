// One API family's part of the server (blas3, lapack, later fft, opencl): its messages, its
// per-session objects (opaque ids that die with their session), and which backend's executor
// (Backend::executor) runs each call. The core (server.cpp) hands it the messages of the types it
// names once their session is authenticated, on the progress thread; whole calls go to the compute
// pool and back through Core::complete, chunked and direct calls through chunked.hpp and direct.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/error.hpp"
#include "server/core.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

namespace outboard::server {

class Service {
 public:
  virtual ~Service() = default;
  // Its name in metrics (the `service` label): "blas3", "lapack", "fft", "opencl".
  virtual const char* name() const = 0;
  // The client message types it serves; no two services share one.
  virtual std::vector<wire::Type> messages() const = 0;
  // Where the payload of one of its messages lands, decided before a byte is pulled (checked
  // against the session's limits: Core::check_limits). Runs inside the arrival: no sends. Throws
  // ProtocolError or std::bad_alloc: the payload is refused, and the session rejected saying why.
  virtual transport::Landing on_payload(Session&, const wire::Message&, uint64_t /*bytes*/) {
    throw ProtocolError("this message carries no payload");
  }
  // One of its messages, with the payload on_payload landed (empty when none came).
  virtual void on_message(Session& s, const wire::Message& m, transport::Buffer payload) = 0;
  // The session has ended: the objects it owned here go with it.
  virtual void on_session_end(PeerId) {}
  // Adds its own keys to the status document (`outboard status`).
  virtual void status(nlohmann::json&) const {}
};

// The services a server runs, over `core`'s backends (services.cpp: where a new family is added).
// Throws Error when a service that every server needs has no backend.
std::vector<std::unique_ptr<Service>> make_services(Core& core);

}  // namespace outboard::server
