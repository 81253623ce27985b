// A client's session: its state, counters and calls in progress. Owned by the server core
// (server.cpp); services and the call machinery reach it through Core::session.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.hpp"
#include "common/secret.hpp"
#include "server/resident_store.hpp"
#include "transport/copy_lanes.hpp"
#include "transport/transport.hpp"

namespace outboard::server {

class Backend;
struct ChunkedCall;  // chunked.hpp

using transport::PeerId;

enum class State { awaiting_hello, awaiting_auth, ready, closing };

struct Session {
  PeerId peer;
  std::string addr;
  std::string client_name;
  std::string identity;          // whose secret it proved knowing (set at the hello, trusted once ready)
  bool identity_known = false;   // the hello named an identity this server has
  bool authenticated = false;    // it proved knowing the identity's secret
  bool wants_encryption = false; // the hello insisted on encryption (OUTBOARD_ENCRYPT=1)
  bool encrypted = false;        // every message sealed (transport::Worker::protect): no lanes, no sink
  std::string refusal_to_send;   // closing after a failed authentication: the answer, held back
  bool refusal_is_join = false;  // ... to a connection that asked to join a session as a lane
  uint32_t calls_in_flight = 0;  // admitted (Core::admit_call) and not yet counted (count_call)
  State state = State::awaiting_hello;
  Nonce client_nonce{}, server_nonce{};
  uint64_t connected_ns = now_ns();
  // The handshake: when its current step began (the connection, then the challenge sent), which
  // auth_timeout_seconds counts from; and when the server last told the client to hold on.
  uint64_t handshake_step_ns = connected_ns, last_hold_ns = connected_ns;
  bool handshake_in_storm = false;  // it saw a storm of handshakes (housekeeping): it has longer
  uint64_t calls = 0, errors = 0, bytes_in = 0, bytes_out = 0;
  uint64_t pings = 0, ping_bytes = 0;  // benchmark traffic received
  uint64_t held_bytes = 0;     // payload memory of calls in progress
  std::string refusal;         // why the last payload was refused
  std::string sink_refusal;    // why a payload sent to the session's sink was refused: ends the session
  uint64_t close_at_ns = 0;    // closing: when to hang up
  // Whole calls whose payload is arriving: when it began (receiving includes finding memory for
  // it), and the backend chosen for it then (its staging memory is that backend's).
  struct Arrival {
    uint64_t ns = 0;
    Backend* backend = nullptr;
  };
  std::unordered_map<uint64_t, Arrival> arrivals;  // by call id
  std::unordered_map<uint64_t, std::shared_ptr<ChunkedCall>> chunked;  // call id -> chunked call in progress
  std::optional<transport::CopyLanes::Remote> remote;  // the client's memory, once it asked for the direct path
  std::unique_ptr<ResidentStore> resident;             // its inputs kept between calls (Core::resident)
  // Its further connections (wire::JoinSession), which carry chunks and benchmark pings; losing
  // one ends the session (what it carried is lost). Bulk sends take them and `peer` in turn.
  std::vector<PeerId> lanes;
  uint64_t lanes_joined = 0;  // bit i: lane number i has joined (each joins once)
  size_t next_bulk = 0;       // the connection for the next bulk send: 0 `peer`, i lanes[i - 1]
};

}  // namespace outboard::server
