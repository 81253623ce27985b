// A transport without a network, for the session fuzzer (fuzz_session.cpp): fake_transport.cpp
// defines transport::Worker (transport.hpp) in its place, so a real server::Server runs on it
// unchanged, and this is the harness's side of it. Peers, their messages and their hang-ups are
// queued here and reach the server's transport events during its next Worker::progress(), the
// way worker.cpp delivers them (see Network::arrive); what the server sends is recorded.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace outboard::transport::fake {

struct Sent {
  PeerId peer = 0;
  std::vector<std::byte> header;
  std::vector<std::byte> payload;  // the segments, one after another
};

class Network {
 public:
  // The one Worker of the process (the server's); throws Error before it is made.
  static Network& get();

  // A new connection: on_connect runs at the next progress(). Ids are never reused.
  PeerId connect(const std::string& addr);
  // A message from `peer`: at the next progress() its payload is landed as worker.cpp lands it
  // (on_payload decides; refused, received or discarded), then the message is delivered. With
  // `rendezvous` the delivery waits one more progress(), so messages behind it can overtake it
  // (UCX pulls large payloads after they are announced). Dropped if the peer is gone by then.
  void arrive(PeerId peer, std::vector<std::byte> header, std::vector<std::byte> payload, bool rendezvous);
  // A payload for the peer's sink (Worker::open_sink), counted by on_sink and dropped.
  void arrive_in_sink(PeerId peer, uint64_t bytes);
  // The peer hangs up or fails: on_disconnect at the next progress(), unless the server closed it.
  void hang_up(PeerId peer);

  // Whether the peer is connected and not closed by the server.
  bool open(PeerId peer) const;
  // Whether progress() still has something to deliver or complete.
  bool pending() const;
  // What the server sent since the last call, in order.
  std::vector<Sent> take_sent();
};

}  // namespace outboard::transport::fake
